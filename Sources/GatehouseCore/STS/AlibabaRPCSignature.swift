// STS: roles, temporary credentials from upstream STS services, OSS self-signing, presigned URLs.
// Serves seed 004 (the OSS SDK's STS and self-signed modes and signed URLs).

import Crypto
import Foundation

/// Alibaba Cloud's RPC (POP) signature, `SignatureMethod=HMAC-SHA1`, `SignatureVersion=1.0`, as STS
/// `AssumeRole` checks it: every parameter but `Signature` (query and form body together), sorted by
/// name in byte order, percent-encoded, then encoded again inside the string to sign.
public enum AlibabaRPCSignature {
    public static func canonicalQuery(_ parameters: [String: String]) -> String {
        parameters.filter { $0.key != "Signature" }
            .sorted { URIEncoding.precedes($0.key, $1.key) }
            .map { URIEncoding.encode($0.key) + "=" + URIEncoding.encode($0.value) }
            .joined(separator: "&")
    }

    public static func stringToSign(method: String, parameters: [String: String]) -> String {
        method + "&" + URIEncoding.encode("/") + "&" + URIEncoding.encode(canonicalQuery(parameters))
    }

    /// Base64 of HMAC-SHA1 keyed with the secret followed by `&`.
    public static func signature(method: String, parameters: [String: String], secret: String) -> String {
        let key = SymmetricKey(data: Array((secret + "&").utf8))
        let mac = HMAC<Insecure.SHA1>.authenticationCode(for: Array(stringToSign(method: method, parameters: parameters).utf8), using: key)
        return Data(mac).base64EncodedString()
    }
}

/// Alibaba Cloud's OpenAPI signature V3 (`ACS3-HMAC-SHA256`), the successor of the RPC signature.
public enum ACS3Signature {
    public static let algorithm = "ACS3-HMAC-SHA256"

    /// - Parameters:
    ///   - headers: every header to sign (names are lower-cased here), including `host` and the `x-acs-*` ones.
    ///   - payloadHash: hex SHA-256 of the body, the `x-acs-content-sha256` value.
    public static func canonicalRequest(
        method: String,
        path: String,
        query: [(String, String)],
        headers: [(String, String)],
        payloadHash: String
    ) -> (request: String, signedHeaders: String) {
        let headers = URIEncoding.canonicalHeaders(headers.map { ($0.0, $0.1.trimmingCharacters(in: .whitespaces)) })
        let request = [
            method, URIEncoding.encode(path, keepingSlash: true), URIEncoding.canonicalQuery(query), headers.lines, headers.names, payloadHash,
        ]
        .joined(separator: "\n")
        return (request, headers.names)
    }

    public static func signature(canonicalRequest: String, secret: String) -> String {
        let stringToSign = algorithm + "\n" + Hex.encode(SHA256.hash(data: Array(canonicalRequest.utf8)))
        return Hex.encode(HMAC<SHA256>.authenticationCode(for: Array(stringToSign.utf8), using: SymmetricKey(data: Array(secret.utf8))))
    }

    public static func authorization(accessKeyID: String, signedHeaders: String, signature: String) -> String {
        "\(algorithm) Credential=\(accessKeyID),SignedHeaders=\(signedHeaders),Signature=\(signature)"
    }
}
