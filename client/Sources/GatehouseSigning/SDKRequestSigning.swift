import Crypto
import Foundation

/// The signed-request scheme of `/v1/sdk` (docs/sdk-protocol.md), shared by the server, which
/// verifies, and the client, which signs:
///
/// ```
/// canonical = METHOD "\n" PATH "\n" TIMESTAMP "\n" NONCE "\n" hex(SHA-256(body))
/// X-Gatehouse-Signature = base64url(HMAC-SHA256(secretKey, canonical))
/// ```
public enum SDKRequestSigning {
    /// The app making the call.
    public static let appKeyHeader = "X-Gatehouse-AppKey"
    /// Unix seconds; the server accepts 300 s either way.
    public static let timestampHeader = "X-Gatehouse-Timestamp"
    /// A value used once per app within the timestamp window.
    public static let nonceHeader = "X-Gatehouse-Nonce"
    /// The HMAC over `canonical(...)`.
    public static let signatureHeader = "X-Gatehouse-Signature"

    /// The signed text: method, request path, timestamp, nonce and the body's SHA-256 (hex), one per line.
    public static func canonical(method: String, path: String, timestamp: Int, nonce: String, body: some Sequence<UInt8>) -> String {
        let bodyHash = Hex.encode(SHA256.hash(data: Array(body)))
        return [method.uppercased(), path, String(timestamp), nonce, bodyHash].joined(separator: "\n")
    }

    /// base64url of HMAC-SHA256 over `canonical` with the app's SDK secret.
    public static func sign(canonical: String, secretKey: String) -> String {
        Base64URL.encode(HMAC<SHA256>.authenticationCode(for: Array(canonical.utf8), using: SymmetricKey(data: Array(secretKey.utf8))))
    }

    /// The four headers of a signed SDK request, now, with a fresh nonce.
    public static func headers(
        appKey: String,
        secretKey: String,
        method: String,
        path: String,
        body: some Sequence<UInt8>,
        at date: Date = Date()
    )
        -> [(String, String)]
    {
        let timestamp = Int(date.timeIntervalSince1970.rounded(.down))
        let nonce = RequestSigning.nonce()
        let signature = sign(canonical: canonical(method: method, path: path, timestamp: timestamp, nonce: nonce, body: body), secretKey: secretKey)
        return [(appKeyHeader, appKey), (timestampHeader, String(timestamp)), (nonceHeader, nonce), (signatureHeader, signature)]
    }
}
