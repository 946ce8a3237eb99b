import Foundation
import Testing

@testable import GatehouseCore

/// The storage pieces around the signers: dates, the session policy reader, the OSS string-to-sign
/// parser, the action table, presigned URL shapes, credentials' freshness and role settings.
@Suite struct STSCoreTests {
    @Test func utcTimeSpellsEveryFormat() throws {
        let time = UTCTime(Date(timeIntervalSince1970: 1_132_253_398))
        #expect(time.http == "Thu, 17 Nov 2005 18:49:58 GMT")
        #expect(time.iso8601 == "2005-11-17T18:49:58Z" && time.compact == "20051117T184958Z" && time.day8 == "20051117")
        #expect(UTCTime.parseHTTP("Thu, 17 Nov 2005 18:49:58 GMT") == Date(timeIntervalSince1970: 1_132_253_398))
        for bad in ["Fri, 17 Nov 2005 18:49:58 GMT", "Thu, 31 Feb 2005 18:49:58 GMT", "Thu, 17 Nov 2005 18:49:58 UTC", "17 Nov 2005", ""] {
            #expect(UTCTime.parseHTTP(bad) == nil, "\(bad)")
        }
        #expect(UTCTime(Date(timeIntervalSince1970: 951_782_400)).iso8601 == "2000-02-29T00:00:00Z")
        #expect(UTCTime(Date(timeIntervalSince1970: -1)).iso8601 == "1969-12-31T23:59:59Z")
    }

    /// The digit-by-digit ISO 8601 spelling against Foundation's formatter, over dates from 1970 to
    /// 9999, and a fifth digit of the year kept (the padded way).
    @Test func iso8601AgreesWithFoundation() {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let date = Date(timeIntervalSince1970: TimeInterval(Int.random(in: 0...253_402_300_799, using: &generator)))
            #expect(UTCTime(date).iso8601 == formatter.string(from: date))
        }
        #expect(UTCTime(Date(timeIntervalSince1970: 253_402_300_800)).iso8601 == "10000-01-01T00:00:00Z")
    }

    static let template =
        #"{"Version":"1","Statement":[{"Effect":"Allow","Action":["oss:GetObject","oss:PutObject"],"Resource":["acs:oss:*:*:photos/users/${accountId}/*"]},{"Effect":"Deny","Action":"oss:*","Resource":"acs:oss:*:*:photos/users/${accountId}/private/*"}]}"#

    @Test func sessionPoliciesAreRenderedSafelyAndRead() throws {
        try StoragePolicy.validateTemplate(Self.template)
        let rendered = try StoragePolicy.render(Self.template, accountID: "alice", deviceID: "d1")
        #expect(rendered.contains("photos/users/alice/*"))
        let policy = try StoragePolicy.parse(rendered)
        #expect(policy.allows(service: "oss", action: "GetObject", object: "photos/users/alice/a.jpg"))
        #expect(policy.allows(service: "oss", action: "putobject", object: "photos/users/alice/b/c.jpg"))
        #expect(!policy.allows(service: "oss", action: "GetObject", object: "photos/users/bob/a.jpg"))
        #expect(!policy.allows(service: "oss", action: "DeleteObject", object: "photos/users/alice/a.jpg"))
        #expect(!policy.allows(service: "oss", action: "GetObject", object: "photos/users/alice/private/x"))
        #expect(!policy.allows(service: "s3", action: "GetObject", object: "photos/users/alice/a.jpg"))
        // Nobody widens the policy through an account name.
        for hostile in ["*", "a*", "alice/../bob", #"a","Resource":"*"#, "", String(repeating: "a", count: 129), "${deviceId}"] {
            #expect(throws: DomainError.self, "\(hostile)") { try StoragePolicy.render(Self.template, accountID: hostile, deviceID: "d1") }
        }
        // A conditional allow grants nothing here; a conditional deny always denies.
        let conditional = try StoragePolicy.parse(
            #"{"Version":"1","Statement":[{"Effect":"Allow","Action":"s3:*","Resource":"arn:aws:s3:::b/*","Condition":{"IpAddress":{"aws:SourceIp":"10.0.0.0/8"}}}]}"#
        )
        #expect(!conditional.allows(service: "s3", action: "GetObject", object: "b/k"))
        let aws = try StoragePolicy.parse(
            #"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"s3:Get*","Resource":"arn:aws:s3:::b/u?/*"}]}"#
        )
        #expect(
            aws.allows(service: "s3", action: "GetObject", object: "b/u1/k") && !aws.allows(service: "s3", action: "GetObject", object: "b/u12/k")
        )
        for bad in [#"{"Version":"1"}"#, #"{"Version":"1","Statement":[{"Effect":"Allow","NotAction":"x","Resource":"*"}]}"#, "[]", "{"] {
            #expect(throws: DomainError.self, "\(bad)") { try StoragePolicy.parse(bad) }
        }
        #expect(throws: DomainError.self) {
            try StoragePolicy.validateTemplate(Self.template.replacingOccurrences(of: "${accountId}", with: "${userId}"))
        }
        #expect(throws: DomainError.self) { try StoragePolicy.validateTemplate(String(repeating: " ", count: 2049)) }
    }

    /// STS's form body is encoded as botocore's (`+` for a space), which moto requires of a session
    /// policy with spaces; signatures keep RFC 3986's `%20`.
    @Test func formBodiesEncodeSpacesAsPlus() {
        #expect(URIEncoding.formEncode(#"{"Effect": "Allow"} a*b~"#) == "%7B%22Effect%22%3A+%22Allow%22%7D+a%2Ab~")
        #expect(URIEncoding.encode("a b") == "a%20b")
    }

    @Test func globsFollowIAM() {
        #expect(Glob.matches("*", "") && Glob.matches("a*c", "abbbc") && Glob.matches("a?c", "abc") && !Glob.matches("a?c", "ac"))
        #expect(Glob.matches("users/alice/*", "users/alice/") && !Glob.matches("users/alice/*", "users/alice"))
        #expect(!Glob.matches("users/*/x", "users/a/y") && Glob.matches("*/*/*", "a/b/c"))
    }

    @Test func ossStringsToSignAreReadBackExactly() throws {
        let date = "Wed, 28 Dec 2022 10:27:41 GMT"
        let put = try OSSStringToSign.parse("PUT\neB5eJF1ptWaXm4bijSPyxw==\ntext/html\n\(date)\nx-oss-meta-author:alice\n/photos/users/alice/a b.jpg")
        #expect(put.verb == "PUT" && put.bucket == "photos" && put.key == "users/alice/a b.jpg" && put.headers.count == 1)
        #expect(put.when == .date(UTCTime.parseHTTP(date)!))
        #expect(StorageAction.oss(put) == "PutObject")
        let url = try OSSStringToSign.parse("GET\n\n\n1699807420\n/bucket/key?security-token=token&versionId=v")
        #expect(url.when == .expires(Date(timeIntervalSince1970: 1_699_807_420)) && url.subresources.count == 2)
        #expect(StorageAction.oss(url) == nil)
        let acl = try OSSStringToSign.parse("PUT\n\n\n\(date)\n/photos/users/alice/a?acl")
        #expect(StorageAction.oss(acl) == "PutObjectAcl")
        let multipart = try OSSStringToSign.parse("PUT\n\n\n\(date)\n/photos/k?partNumber=1&uploadId=abc")
        #expect(StorageAction.oss(multipart) == "PutObject")
        #expect(StorageAction.oss(try OSSStringToSign.parse("GET\n\n\n\(date)\n/photos/")) == "ListObjects")
        #expect(StorageAction.oss(try OSSStringToSign.parse("DELETE\n\n\n\(date)\n/photos/?cors")) == nil)
        #expect(StorageAction.oss(try OSSStringToSign.parse("GET\n\n\n\(date)\n/")) == nil)
        let refused = [
            "", "PUT", "PATCH\n\n\n\(date)\n/photos/k", "GET\n\n\nyesterday\n/photos/k", "GET\n\n\n\(date)\nphotos/k",
            "GET\n\n\n\(date)\nx-oss-b:1\nx-oss-a:2\n/photos/k", "GET\n\n\n\(date)\nX-OSS-Meta:1\n/photos/k", "GET\n\n\n\(date)\nhost:x\n/photos/k",
            "GET\n\n\n\(date)\n/photos/k?unknown=1", "GET\n\n\n\(date)\n/photos/k?uploads&acl", "GET\n\n\n\(date)\n/Photos/k",
            "GET\n\n\n\(date)\n/photos", "GET\n\n\n\(date)\n/photos/k\u{0}", "GET\n\n\n\(date)\nx-oss-date:Thu, 29 Dec 2022 10:27:41 GMT\n/photos/k",
            "GET\n\n\n\(date)\n" + String(repeating: "x", count: 8192),
        ]
        for content in refused {
            #expect(throws: DomainError.self, "\(content.prefix(60))") { try OSSStringToSign.parse(content) }
        }
    }

    let credentials = TemporaryCredentials(
        accessKeyID: "ak",
        accessKeySecret: "sk",
        securityToken: "to/ken+=",
        expiration: Date(timeIntervalSince1970: 2_000_000_000)
    )

    @Test func presignedURLsHaveTheReferenceSDKsShape() throws {
        let now = Date(timeIntervalSince1970: 1_699_807_000)
        let virtual = try #require(StorageEndpoint(url: "https://oss-cn-hangzhou.aliyuncs.com", addressing: .virtual))
        let oss = PresignedURL.oss(
            PresignRequest(method: "GET", bucket: "bucket", key: "a/key+1.txt", expiresIn: 420, contentType: nil),
            endpoint: virtual,
            credentials: credentials,
            now: now
        )
        let resource = "/bucket/a/key+1.txt?security-token=to/ken+="
        let signature = OSSV1Signature.signature(stringToSign: "GET\n\n\n1699807420\n\(resource)", secret: "sk")
        #expect(
            oss
                == "https://bucket.oss-cn-hangzhou.aliyuncs.com/a%2Fkey%2B1.txt?security-token=to%2Fken%2B%3D&OSSAccessKeyId=ak&Expires=1699807420&Signature="
                + URIEncoding.encode(signature)
        )
        let v4 = PresignedURL.ossV4(
            PresignRequest(method: "GET", bucket: "bucket", key: "a/key+1.txt", expiresIn: 420, contentType: nil, ossV4: true),
            endpoint: virtual,
            region: "cn-hangzhou",
            credentials: credentials,
            now: now
        )
        #expect(
            v4.hasPrefix(
                "https://bucket.oss-cn-hangzhou.aliyuncs.com/a%2Fkey%2B1.txt?x-oss-security-token=to%2Fken%2B%3D&x-oss-date=20231112T163640Z&x-oss-expires=420&x-oss-signature-version=OSS4-HMAC-SHA256&x-oss-credential=ak%2F20231112%2Fcn-hangzhou%2Foss%2Faliyun_v4_request&x-oss-signature="
            )
        )
        let path = try #require(StorageEndpoint(url: "http://127.0.0.1:5000", addressing: .path))
        let s3 = PresignedURL.s3(
            PresignRequest(method: "PUT", bucket: "photos", key: "users/alice/x y.jpg", expiresIn: 600, contentType: "image/jpeg"),
            endpoint: path,
            region: "us-east-1",
            credentials: credentials,
            now: now
        )
        #expect(
            s3.hasPrefix(
                "http://127.0.0.1:5000/photos/users/alice/x%20y.jpg?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=ak%2F20231112%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20231112T163640Z&X-Amz-Expires=600&X-Amz-SignedHeaders=content-type%3Bhost&X-Amz-Security-Token=to%2Fken%2B%3D&X-Amz-Signature="
            )
        )
        #expect(StorageEndpoint(url: "https://h/x", addressing: .path) == nil && StorageEndpoint(url: "https://u@h", addressing: .path) == nil)
    }

    @Test func credentialsAreNeverHandedOutCloseToExpiry() {
        let expiry = credentials.expiration
        #expect(credentials.usable(at: expiry.addingTimeInterval(-301)))
        #expect(!credentials.usable(at: expiry.addingTimeInterval(-299)))
        #expect(!credentials.usable(at: expiry.addingTimeInterval(-1000), neededUntil: expiry.addingTimeInterval(-200)))
    }

    @Test func roleSettingsAreChecked() throws {
        let app = AppID(UUID())
        var change = RoleChange()
        change.provider = "alibaba"
        change.stsEndpoint = "https://sts.cn-hangzhou.aliyuncs.com"
        change.region = "cn-hangzhou"
        change.roleArn = "acs:ram::1234567890123:role/uploads"
        change.attestID = "login-pow"
        let role = try change.created(appID: app, roleID: try RoleID(validating: "uploads"), at: Date())
        #expect(role.durationSeconds == 3600 && role.addressing == .virtual && role.longestPresignSeconds == 3300 && !role.needsAccount)
        var longer = RoleChange()
        longer.durationSeconds = 7200
        #expect(throws: DomainError.self) { try longer.applied(to: role, at: Date()) }
        longer.maxDurationSeconds = 7200
        #expect(try longer.applied(to: role, at: Date()).durationSeconds == 7200)
        var selfSigned = RoleChange()
        selfSigned.selfSigned = true
        #expect(throws: DomainError.self) { try selfSigned.applied(to: role, at: Date()) }
        selfSigned.policyTemplate = Self.template
        #expect(try selfSigned.applied(to: role, at: Date()).needsAccount)
        #expect(throws: DomainError.self) { try RoleID(validating: "-no") }
        #expect(throws: DomainError.self) { try UpstreamKey(accessKeyID: "ak", accessKeySecret: "short") }
    }
}
