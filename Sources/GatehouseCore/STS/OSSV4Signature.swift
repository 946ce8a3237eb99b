import Crypto
import Foundation

/// OSS signature version 4 (`OSS4-HMAC-SHA256`), the header and query forms.
public enum OSSV4Signature {
    public static let algorithm = "OSS4-HMAC-SHA256"
    public static let unsignedPayload = "UNSIGNED-PAYLOAD"

    public static func scope(day: String, region: String) -> String { "\(day)/\(region)/oss/aliyun_v4_request" }

    /// Query pairs encoded and sorted by encoded name; an empty value is written as the bare name.
    /// `headers` are every request header: `x-oss-*`, `content-type` and `content-md5` are always
    /// signed, others only when named in `additionalHeaders`.
    public static func canonicalRequest(
        method: String,
        bucket: String?,
        key: String,
        query: [(String, String)],
        headers: [(String, String)],
        additionalHeaders: [String] = []
    ) -> String {
        let canonicalQuery = query.map { (URIEncoding.encode($0.0), URIEncoding.encode($0.1)) }
            .sorted { $0.0 == $1.0 ? URIEncoding.precedes($0.1, $1.1) : URIEncoding.precedes($0.0, $1.0) }
            .map { $0.1.isEmpty ? $0.0 : "\($0.0)=\($0.1)" }
            .joined(separator: "&")
        let additional = additionalHeaders.map { $0.lowercased() }.sorted(by: URIEncoding.precedes)
        let signed = headers.map { ($0.0.lowercased(), $0.1.trimmingCharacters(in: .whitespaces)) }
            .filter { $0.0.hasPrefix("x-oss-") || $0.0 == "content-type" || $0.0 == "content-md5" || additional.contains($0.0) }
        let canonicalHeaders = URIEncoding.canonicalHeaders(signed).lines
        let path = URIEncoding.encode((bucket.map { "/\($0)/" } ?? "/") + key, keepingSlash: true)
        let payload = headers.first { $0.0.lowercased() == "x-oss-content-sha256" }?.1 ?? unsignedPayload
        return [method, path, canonicalQuery, canonicalHeaders, additional.joined(separator: ";"), payload].joined(separator: "\n")
    }

    public static func signature(canonicalRequest: String, secret: String, time: UTCTime, region: String) -> String {
        let stringToSign = [
            algorithm, time.compact, scope(day: time.day8, region: region), Hex.encode(SHA256.hash(data: Array(canonicalRequest.utf8))),
        ]
        .joined(separator: "\n")
        let key = SigV4.derivedKey("aliyun_v4" + secret, [time.day8, region, "oss", "aliyun_v4_request"])
        return Hex.encode(HMAC<SHA256>.authenticationCode(for: Array(stringToSign.utf8), using: key))
    }

    public static func authorization(accessKeyID: String, time: UTCTime, region: String, additionalHeaders: [String], signature: String) -> String {
        let additional = additionalHeaders.map { $0.lowercased() }.sorted(by: URIEncoding.precedes)
        return "\(algorithm) Credential=\(accessKeyID)/\(scope(day: time.day8, region: region))"
            + (additional.isEmpty ? "" : ",AdditionalHeaders=\(additional.joined(separator: ";"))") + ",Signature=\(signature)"
    }
}
