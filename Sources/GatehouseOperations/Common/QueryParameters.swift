import Foundation
import GatehouseCore

/// A listing's filters as text, however they arrived (an API query string, a console form): the
/// query types read them through this, so the API and the console read them alike and refuse the
/// same input with the same `invalid_parameter`.
public struct QueryParameters {
    private let lookup: (String) -> String?

    public init(_ lookup: @escaping (String) -> String?) {
        self.lookup = lookup
    }

    public func string(_ name: String) -> String? { lookup(name) }

    /// JSON Schema counts `3364.0` as the integer 3364, and contract tools send it that way, so a zero
    /// fraction is read too; anything else that is not plain digits is refused.
    public func int(_ name: String) throws(DomainError) -> Int? {
        guard let text = lookup(name) else { return nil }
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let zeroFraction = parts.count == 1 || (!parts[1].isEmpty && parts[1].allSatisfy { $0 == "0" })
        guard zeroFraction, let value = Int(parts[0]) else { throw DomainError(.invalidParameter, "\(name) must be an integer.", field: name) }
        return value
    }

    /// An RFC 3339 time such as `2026-11-22T10:00:00Z`.
    public func date(_ name: String) throws(DomainError) -> Date? {
        guard let text = lookup(name) else { return nil }
        guard let date = RFC3339.parse(text) else {
            throw DomainError(.invalidParameter, "\(name) is an RFC 3339 time such as 2026-11-22T10:00:00Z.", field: name)
        }
        return date
    }
}
