import Foundation

/// Temporary credentials from an upstream STS, as the distribution endpoint hands them out.
public struct TemporaryCredentials: Equatable, Sendable, Codable {
    public let accessKeyID: String
    public let accessKeySecret: String
    public let securityToken: String
    public let expiration: Date

    public init(accessKeyID: String, accessKeySecret: String, securityToken: String, expiration: Date) {
        self.accessKeyID = accessKeyID
        self.accessKeySecret = accessKeySecret
        self.securityToken = securityToken
        self.expiration = expiration
    }

    /// The SDKs refresh when under 5 minutes remain; Gatehouse never hands out credentials that
    /// close to expiry, and renews them in time.
    public static let refreshMargin: TimeInterval = 300

    /// Whether these may still be handed out at `now`, for use until `neededUntil` (a presigned
    /// URL's expiry, or now for a plain hand-out).
    public func usable(at now: Date, neededUntil: Date? = nil) -> Bool {
        expiration.timeIntervalSince(max(now, neededUntil ?? now)) >= Self.refreshMargin
    }
}

/// Where a role's objects live, for presigned URLs.
public struct StorageEndpoint: Equatable, Sendable {
    public enum Addressing: String, Sendable, CaseIterable {
        /// `https://bucket.host/key`
        case virtual
        /// `https://host/bucket/key`
        case path
    }

    public let scheme: String
    /// The host, with a port when it is not the scheme's default.
    public let host: String
    public let addressing: Addressing

    public init(scheme: String, host: String, addressing: Addressing) {
        self.scheme = scheme
        self.host = host
        self.addressing = addressing
    }

    /// Reads `https://oss-cn-hangzhou.aliyuncs.com` or `http://127.0.0.1:9000`: a scheme and an
    /// authority, no path, query or user.
    public init?(url: String, addressing: Addressing) {
        guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(), scheme == "https" || scheme == "http",
            let host = components.host, !host.isEmpty, components.user == nil, components.password == nil, components.query == nil,
            components.fragment == nil, components.path.isEmpty || components.path == "/"
        else { return nil }
        self.init(scheme: scheme, host: host + (components.port.map { ":\($0)" } ?? ""), addressing: addressing)
    }

    /// The request host and the path before the key, for `bucket`.
    func location(bucket: String) -> (host: String, bucketPath: String) {
        switch addressing {
        case .virtual: ("\(bucket).\(host)", "")
        case .path: (host, "/\(bucket)")
        }
    }
}

/// What a presigned URL is for.
public struct PresignRequest: Equatable, Sendable {
    public let method: String
    public let bucket: String
    public let key: String
    public let expiresIn: Int
    public let contentType: String?
    /// OSS only: signature version 4 (`OSS4-HMAC-SHA256`) instead of version 1.
    public let ossV4: Bool

    public init(method: String, bucket: String, key: String, expiresIn: Int, contentType: String?, ossV4: Bool = false) {
        self.method = method
        self.bucket = bucket
        self.key = key
        self.expiresIn = expiresIn
        self.contentType = contentType
        self.ossV4 = ossV4
    }
}

/// Presigned URLs, written exactly as the reference SDKs write them (`oss2` for OSS V1, botocore
/// for S3), so that a client cannot tell which one made the URL.
public enum PresignedURL {
    /// OSS V1 query signature; with STS credentials `security-token` is a signed sub-resource.
    public static func oss(_ request: PresignRequest, endpoint: StorageEndpoint, credentials: TemporaryCredentials, now: Date) -> String {
        let expires = String(Int(now.timeIntervalSince1970) + request.expiresIn)
        let token = credentials.securityToken
        let resource = OSSV1Signature.canonicalizedResource(bucket: request.bucket, key: request.key, query: [("security-token", token)])
        let stringToSign = OSSV1Signature.stringToSign(
            verb: request.method,
            contentType: request.contentType ?? "",
            date: expires,
            resource: resource
        )
        let signature = OSSV1Signature.signature(stringToSign: stringToSign, secret: credentials.accessKeySecret)
        let query = [("security-token", token), ("OSSAccessKeyId", credentials.accessKeyID), ("Expires", expires), ("Signature", signature)]
        return ossObjectURL(request, endpoint: endpoint, query: query)
    }

    /// OSS V4 query signature (`x-oss-signature-version=OSS4-HMAC-SHA256`), as `oss2`'s V4 auth writes it.
    public static func ossV4(
        _ request: PresignRequest,
        endpoint: StorageEndpoint,
        region: String,
        credentials: TemporaryCredentials,
        now: Date
    ) -> String {
        let time = UTCTime(now)
        var query = [
            ("x-oss-security-token", credentials.securityToken), ("x-oss-date", time.compact), ("x-oss-expires", String(request.expiresIn)),
            ("x-oss-signature-version", OSSV4Signature.algorithm),
            ("x-oss-credential", "\(credentials.accessKeyID)/\(OSSV4Signature.scope(day: time.day8, region: region))"),
        ]
        let canonical = OSSV4Signature.canonicalRequest(
            method: request.method,
            bucket: request.bucket,
            key: request.key,
            query: query,
            headers: request.contentType.map { [("content-type", $0)] } ?? []
        )
        query.append(
            (
                "x-oss-signature",
                OSSV4Signature.signature(canonicalRequest: canonical, secret: credentials.accessKeySecret, time: time, region: region)
            )
        )
        return ossObjectURL(request, endpoint: endpoint, query: query)
    }

    /// S3 SigV4 query signature (`UNSIGNED-PAYLOAD`); a PUT's content type is a signed header.
    public static func s3(
        _ request: PresignRequest,
        endpoint: StorageEndpoint,
        region: String,
        credentials: TemporaryCredentials,
        now: Date
    ) -> String {
        let time = UTCTime(now)
        let scope = SigV4.Scope(day: time.day8, region: region, service: "s3")
        let (host, bucketPath) = endpoint.location(bucket: request.bucket)
        let path = bucketPath + "/" + URIEncoding.encode(request.key, keepingSlash: true)
        var headers = [("host", host)]
        if let contentType = request.contentType { headers.append(("content-type", contentType)) }
        let signedHeaders = URIEncoding.canonicalHeaders(headers).names
        var query = [
            ("X-Amz-Algorithm", SigV4.algorithm), ("X-Amz-Credential", "\(credentials.accessKeyID)/\(scope.text)"),
            ("X-Amz-Date", time.compact), ("X-Amz-Expires", String(request.expiresIn)), ("X-Amz-SignedHeaders", signedHeaders),
            ("X-Amz-Security-Token", credentials.securityToken),
        ]
        let canonical = SigV4.canonicalRequest(method: request.method, path: path, query: query, headers: headers, payloadHash: SigV4.unsignedPayload)
        let stringToSign = SigV4.stringToSign(canonicalRequest: canonical.request, amzDate: time.compact, scope: scope)
        query.append(("X-Amz-Signature", SigV4.signature(stringToSign: stringToSign, secret: credentials.accessKeySecret, scope: scope)))
        return "\(endpoint.scheme)://\(host)\(path)?" + joined(query)
    }

    /// The object's URL as oss2 writes it: the key encoded whole (`/` too), then the query.
    private static func ossObjectURL(_ request: PresignRequest, endpoint: StorageEndpoint, query: [(String, String)]) -> String {
        let (host, bucketPath) = endpoint.location(bucket: request.bucket)
        return "\(endpoint.scheme)://\(host)\(bucketPath)/\(URIEncoding.encode(request.key))?" + joined(query)
    }

    private static func joined(_ query: [(String, String)]) -> String {
        query.map { "\(URIEncoding.encode($0.0))=\(URIEncoding.encode($0.1))" }.joined(separator: "&")
    }
}
