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
    public static let appKeyHeader = "X-Gatehouse-AppKey"
    public static let timestampHeader = "X-Gatehouse-Timestamp"
    public static let nonceHeader = "X-Gatehouse-Nonce"
    public static let signatureHeader = "X-Gatehouse-Signature"

    public static func canonical(method: String, path: String, timestamp: Int, nonce: String, body: some Sequence<UInt8>) -> String {
        let bodyHash = SHA256.hash(data: Array(body)).map { String(format: "%02x", $0) }.joined()
        return [method.uppercased(), path, String(timestamp), nonce, bodyHash].joined(separator: "\n")
    }

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
