import Crypto
import Foundation

/// Request signatures as the app-protection SDK makes them (`vmpHash` gives whash, `vmpSign` gives
/// wtoken), shared by the server, which verifies, and the client, which signs. docs/sdk-protocol.md
/// has the bytes.
///
/// ```
/// whash     = base64url(SHA-256(input))          input: the URL for GET/DELETE, else the body
/// canonical = "gatehouse-wtoken-1\n" METHOD "\n" deviceId "\n" timestamp "\n" nonce "\n" hex(SHA-256(data))
///             data: the body (default mode) or the whash's ASCII (custom mode)
/// wtoken    = "w1." deviceId "." timestamp "." nonce "." base64url(HMAC-SHA256(deviceKey, canonical))
/// ```
public enum RequestSigning {
    /// The scheme version, the first field of every wtoken.
    public static let version = "w1"
    /// The request header of the signature.
    public static let wtokenHeader = "wToken"
    /// The request header of the body hash.
    public static let whashHeader = "ali_sign_whash"
    static let context = "gatehouse-wtoken-1"

    /// Whether the SDK hashes the URL (GET, DELETE) or the body (POST, PUT, PATCH) for this method.
    public static func hashesURL(_ method: String) -> Bool {
        let upper = method.uppercased()
        return upper == "GET" || upper == "DELETE" || upper == "HEAD" || upper == "OPTIONS"
    }

    /// `vmpHash`: the whash of the URL or body bytes.
    public static func whash(_ input: some Sequence<UInt8>) -> String {
        Base64URL.encode(SHA256.hash(data: Array(input)))
    }

    /// `vmpSign`: the wtoken over `data` (the body, or the whash's bytes in custom mode).
    public static func wtoken(
        method: String,
        data: some Sequence<UInt8>,
        deviceID: String,
        deviceKey: [UInt8],
        timestamp: Int64,
        nonce: String
    ) -> String {
        let dataHash = Array(SHA256.hash(data: Array(data)))
        let mac = self.mac(method: method, deviceID: deviceID, timestamp: timestamp, nonce: nonce, dataHash: dataHash, deviceKey: deviceKey)
        return [version, deviceID, String(timestamp), nonce, Base64URL.encode(mac)].joined(separator: ".")
    }

    /// The MAC a wtoken carries, from the hash of the signed data.
    public static func mac(method: String, deviceID: String, timestamp: Int64, nonce: String, dataHash: [UInt8], deviceKey: [UInt8]) -> [UInt8] {
        let hex = Hex.encode(dataHash)
        let canonical = [context, method.uppercased(), deviceID, String(timestamp), nonce, hex].joined(separator: "\n")
        return Array(HMAC<SHA256>.authenticationCode(for: Array(canonical.utf8), using: SymmetricKey(data: deviceKey)))
    }

    /// A fresh nonce: base64url of 16 random bytes (22 characters).
    public static func nonce() -> String {
        var generator = SystemRandomNumberGenerator()
        return Base64URL.encode((0..<16).map { _ in UInt8.random(in: 0...255, using: &generator) })
    }
}
