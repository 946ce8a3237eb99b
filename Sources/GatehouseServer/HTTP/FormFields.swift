import Foundation
import GatehouseCore

/// `application/x-www-form-urlencoded` bodies, for endpoints that take forms because the service
/// they stand in for does (siteverify).
enum FormFields {
    /// The fields, last value winning; nil when a name or value is not valid percent-encoding.
    static func parse(_ text: String) -> [String: String]? {
        var fields: [String: String] = [:]
        for pair in text.split(separator: "&", omittingEmptySubsequences: true) {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            guard let name = decode(parts[0]), let value = decode(parts.count > 1 ? parts[1] : "") else { return nil }
            fields[name] = value
        }
        return fields
    }

    private static func decode(_ text: Substring) -> String? {
        RequestPath.percentDecoded(text.replacingOccurrences(of: "+", with: " "))
    }
}
