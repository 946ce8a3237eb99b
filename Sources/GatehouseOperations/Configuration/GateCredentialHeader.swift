import GatehouseCore

/// Which header may carry the gateway's credential. A header the client itself controls on the way
/// to the gate (a cookie, a forwarding header, a token header) or one that frames the request would
/// let the credential be confused with something else.
public enum GateCredentialHeader {
    /// The headers no token may travel in, and those the gate reads the original request from.
    static let refused = AttesterPolicy.reservedHeaders.union([
        "x-original-method", "x-original-uri", "x-original-url", "eo-attest-token",
    ])

    /// At most 64 bytes and not one of the refused headers. Whether it is a field name at all is
    /// HTTPTypes' call, made where the server turns it into one (`GatewayCredential.header(named:)`),
    /// which refuses the start as this does.
    public static func isAcceptable(_ name: String) -> Bool {
        !name.isEmpty && name.utf8.count <= 64 && !refused.contains(name.lowercased())
    }
}
