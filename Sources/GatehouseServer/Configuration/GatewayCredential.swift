import GatehouseCore
import HTTPTypes

/// Which header may carry the gateway's credential. A header the client itself controls on the way
/// to the gate (a cookie, a forwarding header, a token header) or one that frames the request would
/// let the credential be confused with something else.
enum GatewayCredential {
    /// The headers no token may travel in, and those the gate reads the original request from.
    static let refusedHeaders = AttesterPolicy.reservedHeaders.union([
        "x-original-method", "x-original-uri", "x-original-url", "eo-attest-token",
    ])

    static func isAcceptableHeader(_ name: String) -> Bool {
        guard HTTPField.Name(name) != nil, name.utf8.count <= 64 else { return false }
        return !refusedHeaders.contains(name.lowercased())
    }

    /// `GATEHOUSE_GATE_CREDENTIAL_HEADER` as a header name, or the reason it cannot be one.
    static func header(named name: String) throws -> HTTPField.Name {
        guard isAcceptableHeader(name), let header = HTTPField.Name(name) else {
            throw ConfigurationError("the gate's credential header '\(name)' cannot be used")
        }
        return header
    }
}
