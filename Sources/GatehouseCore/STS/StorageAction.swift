/// Which policy action a storage request needs, so that a string or a URL is signed only when the
/// caller's session policy allows it. Requests that are not in these tables are refused: signing
/// something Gatehouse cannot judge would hand out the key's full power.
public enum StorageAction {
    /// Sub-resources that change how an object is returned, not what is done to it.
    static let modifiers: Set<String> = [
        "response-content-type", "response-content-language", "response-expires", "response-cache-control",
        "response-content-disposition", "response-content-encoding", "x-oss-process", "security-token",
    ]

    /// The OSS action (without `oss:`) a V1 string-to-sign asks for, or nil for one Gatehouse does
    /// not sign.
    public static func oss(_ request: OSSStringToSign) -> String? {
        let names = Set(request.subresources.map(\.0)).subtracting(modifiers)
        if request.key.isEmpty {
            guard request.bucket != nil else { return nil }
            switch (request.verb, names) {
            case ("GET", []): return "ListObjects"
            case ("GET", ["uploads"]): return "ListMultipartUploads"
            default: return nil
            }
        }
        switch (request.verb, names) {
        case ("GET", []), ("HEAD", []), ("HEAD", ["objectMeta"]), ("GET", ["objectMeta"]): return "GetObject"
        case ("GET", ["acl"]): return "GetObjectAcl"
        case ("GET", ["tagging"]): return "GetObjectTagging"
        case ("GET", ["uploadId"]): return "ListParts"
        case ("PUT", []), ("PUT", ["partNumber", "uploadId"]), ("POST", ["uploads"]), ("POST", ["uploadId"]), ("POST", ["append", "position"]):
            return "PutObject"
        case ("PUT", ["acl"]): return "PutObjectAcl"
        case ("PUT", ["tagging"]): return "PutObjectTagging"
        case ("DELETE", []): return "DeleteObject"
        case ("DELETE", ["uploadId"]): return "AbortMultipartUpload"
        case ("DELETE", ["tagging"]): return "DeleteObjectTagging"
        default: return nil
        }
    }

    /// A presigned URL's action: only downloads and uploads are offered.
    public static func presigned(method: String) -> String? {
        switch method {
        case "GET": "GetObject"
        case "PUT": "PutObject"
        default: nil
        }
    }
}
