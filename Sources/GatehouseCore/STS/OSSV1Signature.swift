import Crypto
import Foundation

/// OSS signature version 1 (HMAC-SHA1): the `Authorization: OSS <AccessKeyId>:<signature>` header
/// the mobile SDKs' self-signed mode asks for, and the query-string form of presigned URLs.
public enum OSSV1Signature {
    /// Query parameters that belong to the canonicalized resource; any other is left out. The set of
    /// the `oss2` Python SDK (2.19), which presigned URLs must match byte for byte.
    public static let subresources: Set<String> = [
        "response-content-type", "response-content-language", "response-cache-control", "logging", "response-content-encoding",
        "acl", "uploadId", "uploads", "partNumber", "group", "link", "delete", "website", "location", "objectInfo", "objectMeta",
        "response-expires", "response-content-disposition", "cors", "lifecycle", "restore", "qos", "referer", "stat", "bucketInfo",
        "append", "position", "security-token", "live", "comp", "status", "vod", "startTime", "endTime", "x-oss-process", "symlink",
        "callback", "callback-var", "tagging", "encryption", "versions", "versioning", "versionId", "policy", "requestPayment",
        "x-oss-traffic-limit", "qosInfo", "asyncFetch", "x-oss-request-payer", "sequential", "inventory", "inventoryId",
        "continuation-token", "worm", "wormId", "wormExtend", "replication", "replicationLocation", "replicationProgress",
        "transferAcceleration", "cname", "metaQuery", "x-oss-ac-source-ip", "x-oss-ac-subnet-mask", "x-oss-ac-vpc-id",
        "x-oss-ac-forward-allow", "resourceGroup", "style", "styleName", "x-oss-async-process", "regionList",
        "x-oss-write-get-object-response", "bucketArchiveDirectRead", "httpsConfig", "redundancyTransition",
        "x-oss-target-redundancy-type", "x-oss-redundancy-transition-taskid", "accessPoint", "accessPointPolicy",
        "publicAccessBlock", "x-oss-access-point-name", "requesterQosInfo", "qosRequester", "resourcePoolInfo", "resourcePool",
        "resourcePoolBuckets",
    ]

    /// `/bucket/key?sub&sub=value`: the key as is (not percent-encoded), known sub-resources only,
    /// sorted by name; `/` alone without a bucket.
    public static func canonicalizedResource(bucket: String?, key: String, query: [(String, String)]) -> String {
        let kept = query.filter { subresources.contains($0.0) }.sorted { URIEncoding.precedes($0.0, $1.0) }
        let suffix = kept.isEmpty ? "" : "?" + kept.map { $0.1.isEmpty ? $0.0 : "\($0.0)=\($0.1)" }.joined(separator: "&")
        guard let bucket else { return "/" + suffix }
        return "/\(bucket)/\(key)" + suffix
    }

    /// `x-oss-*` headers, lower-cased and sorted, each `name:value\n`.
    public static func canonicalizedHeaders(_ headers: [(String, String)]) -> String {
        headers.map { ($0.0.lowercased(), $0.1) }
            .filter { $0.0.hasPrefix("x-oss-") }
            .sorted { URIEncoding.precedes($0.0, $1.0) }
            .map { "\($0.0):\($0.1)\n" }
            .joined()
    }

    /// `date` is the HTTP date (or `x-oss-date`) for a header signature, the absolute expiry in epoch
    /// seconds for a URL.
    public static func stringToSign(
        verb: String,
        contentMD5: String = "",
        contentType: String = "",
        date: String,
        headers: [(String, String)] = [],
        resource: String
    ) -> String {
        [verb, contentMD5, contentType, date, canonicalizedHeaders(headers) + resource].joined(separator: "\n")
    }

    public static func signature(stringToSign: String, secret: String) -> String {
        let mac = HMAC<Insecure.SHA1>.authenticationCode(for: Array(stringToSign.utf8), using: SymmetricKey(data: Array(secret.utf8)))
        return Data(mac).base64EncodedString()
    }

    public static func authorization(accessKeyID: String, signature: String) -> String {
        "OSS \(accessKeyID):\(signature)"
    }
}
