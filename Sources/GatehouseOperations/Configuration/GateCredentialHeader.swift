import GatehouseCore

/// Which header may carry the gateway's credential. A header the client itself controls on the way
/// to the gate (a cookie, a forwarding header, a token header) or one that frames the request would
/// let the credential be confused with something else.
public enum GateCredentialHeader {
    /// The headers no token may travel in, and those the gate reads the original request from.
    static let refused = AttesterPolicy.reservedHeaders.union([
        "x-original-method", "x-original-uri", "x-original-url", "eo-attest-token",
    ])

    /// A field name (RFC 9110's token) of at most 64 bytes that is not one of the refused headers.
    public static func isAcceptable(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= 64, name.utf8.allSatisfy(isTokenByte) else { return false }
        return !refused.contains(name.lowercased())
    }

    private static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"): true
        default: "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }
}
