import Crypto
import Foundation

/// AWS Signature Version 4, for STS `AssumeRole` (header-signed POST) and S3 presigned URLs
/// (query-signed). One signer for every AWS-compatible peer: AWS, MinIO, Ceph RGW, moto.
public enum SigV4 {
    public static let algorithm = "AWS4-HMAC-SHA256"
    public static let unsignedPayload = "UNSIGNED-PAYLOAD"

    public struct Scope: Equatable, Sendable {
        public let day: String
        public let region: String
        public let service: String
        public init(day: String, region: String, service: String) {
            self.day = day
            self.region = region
            self.service = service
        }
        public var text: String { "\(day)/\(region)/\(service)/aws4_request" }
    }

    /// `path` is already the canonical URI (S3 encodes each segment once; other services twice);
    /// query pairs are raw and encoded here; header values are trimmed with inner runs of spaces
    /// collapsed.
    public static func canonicalRequest(
        method: String,
        path: String,
        query: [(String, String)],
        headers: [(String, String)],
        payloadHash: String
    ) -> (request: String, signedHeaders: String) {
        let headers = URIEncoding.canonicalHeaders(
            headers.map { ($0.0, $0.1.split(separator: " ", omittingEmptySubsequences: true).joined(separator: " ")) }
        )
        let request = [method, path, URIEncoding.canonicalQuery(query), headers.lines, headers.names, payloadHash].joined(separator: "\n")
        return (request, headers.names)
    }

    public static func stringToSign(canonicalRequest: String, amzDate: String, scope: Scope) -> String {
        [algorithm, amzDate, scope.text, Hex.encode(SHA256.hash(data: Array(canonicalRequest.utf8)))].joined(separator: "\n")
    }

    public static func signature(stringToSign: String, secret: String, scope: Scope) -> String {
        let key = derivedKey("AWS4" + secret, [scope.day, scope.region, scope.service, "aws4_request"])
        return Hex.encode(HMAC<SHA256>.authenticationCode(for: Array(stringToSign.utf8), using: key))
    }

    /// The HMAC-SHA256 key chain of SigV4 (and of OSS V4, which copies it with other names).
    static func derivedKey(_ seed: String, _ parts: [String]) -> SymmetricKey {
        var key = SymmetricKey(data: Array(seed.utf8))
        for part in parts {
            key = SymmetricKey(data: Array(HMAC<SHA256>.authenticationCode(for: Array(part.utf8), using: key)))
        }
        return key
    }

    public static func authorization(accessKeyID: String, scope: Scope, signedHeaders: String, signature: String) -> String {
        "\(algorithm) Credential=\(accessKeyID)/\(scope.text), SignedHeaders=\(signedHeaders), Signature=\(signature)"
    }

    /// The canonical URI of an S3 object: each segment encoded once, slashes kept.
    public static func s3Path(bucket: String?, key: String) -> String {
        let path = (bucket.map { "/\($0)" } ?? "") + "/" + key
        return URIEncoding.encode(path, keepingSlash: true)
    }
}
