import Crypto
import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseTestSupport
import HTTPTypes
import Testing

/// Credential vending, self-signed mode and presigned URLs over loopback HTTP on both stores,
/// against a stub STS that checks each call's signature and can fail on purpose. (moto, oss2,
/// botocore and the Alibaba SDK are the peers of tests/interop/sts_interop.py.)
@Suite struct STSFlowTests {
    typealias Flow = DeviceRiskFlowTests
    typealias Attest = AttestationFlowTests

    struct Caller {
        let app: Flow.AppCredentials
        let device: String
        let token: String
        var headers: HTTPFields { [HTTPField.Name("EO-Attest-Token")!: token] }
    }

    /// An app with a PoW attester, an attested device whose account `alice` the backend vouched for.
    static func attestedCaller(_ server: ServerFixture, account: String = "alice", tokenLifetime: Int = 300) async throws -> Caller {
        let app = try await Flow.createApp(server)
        let attester = try await server.send(
            .post,
            "/v1/admin/apps/\(app.appKey)/attesters",
            body: #"{"attestId":"login-pow","pow":{"maxNumber":1000},"adaptive":false,"tokenLifetimeSeconds":\#(tokenLifetime)}"#
        )
        #expect(attester.status == .created)
        let device = try await Flow.startDevice(server, app)
        _ = try await Flow.query(server, app, try await Flow.ztoken(server, app, device: device, account: account), account: account)
        let payload = try Attest.solve(try await Attest.challenge(server, app, "login-pow", device))
        let token = try await Attest.redeem(server, app, "login-pow", device, payload).decoded(Components.Schemas.AttestTokenResponse.self).token
        return Caller(app: app, device: device, token: token)
    }

    static let awsPolicy =
        #"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":["s3:GetObject","s3:PutObject"],"Resource":"arn:aws:s3:::photos/users/${accountId}/*"}]}"#

    static func createRole(_ server: ServerFixture, _ caller: Caller, _ roleID: String, sts: String, extra: String = "") async throws {
        let body =
            #"{"roleId":"\#(roleID)","provider":"aws","stsEndpoint":"\#(sts)","region":"us-east-1","roleArn":"arn:aws:iam::123456789012:role/uploads","#
            + #""attestId":"login-pow","accessKeyId":"AKIASTUB","accessKeySecret":"stub-long-term-secret","#
            + #""storageEndpoint":"http://127.0.0.1:9000","policyTemplate":\#(STSRoleFlowTests.json(awsPolicy))\#(extra)}"#
        let created = try await server.send(.post, "/v1/admin/apps/\(caller.app.appKey)/roles", body: body)
        #expect(created.status == .created, "\(created.json ?? [:])")
    }

    static func token(
        _ server: ServerFixture,
        _ caller: Caller,
        role: String,
        query: String = ""
    ) async throws -> TestResponse {
        try await server.send(.get, "/v1/sts/token?appKey=\(caller.app.appKey)&roleId=\(role)\(query)", headers: caller.headers)
    }

    @Test(arguments: TestStoreKind.available)
    func attestedDevicesGetCachedCredentialsInTheSeedsShape(kind: TestStoreKind) async throws {
        let sts = StubSTS(accessKeyID: "AKIASTUB", secret: "stub-long-term-secret")
        try await sts.serve { stsURL in
            try await withServer(kind) { server in
                let caller = try await Self.attestedCaller(server)
                try await Self.createRole(server, caller, "uploads", sts: stsURL, extra: #","durationSeconds":900"#)

                let answer = try await Self.token(server, caller, role: "uploads")
                #expect(answer.status == .ok, "\(answer.json ?? [:])")
                // The seed's field names, exactly: the OSS SDK reads these keys.
                #expect(
                    Set(answer.json.map { Array($0.keys) } ?? []) == ["StatusCode", "AccessKeyId", "AccessKeySecret", "Expiration", "SecurityToken"]
                )
                let first = try answer.decoded(Components.Schemas.STSToken.self)
                #expect(first.statusCode == 200 && first.accessKeyId == "ASIASTUB1" && first.securityToken == "token&1")
                let expiration = first.expiration
                #expect(expiration.count == 20 && expiration.hasSuffix("Z") && RFC3339.parse(expiration)! > Date().addingTimeInterval(800))
                // The session policy went upstream rendered for the vouched account, signed with the long-term key.
                let sent = try #require(await sts.calls.first)
                #expect(sent["Policy"] == Self.awsPolicy.replacingOccurrences(of: "${accountId}", with: "alice"))
                #expect(sent["DurationSeconds"] == "900" && sent["RoleSessionName"] == "gatehouse-\(caller.device)")

                // Within the cache window: no upstream call, the same credentials; the alias path too.
                let second = try await Self.token(server, caller, role: "uploads").decoded(Components.Schemas.STSToken.self)
                let alias = try await server.send(.get, "/distribute-token.json?appKey=\(caller.app.appKey)&roleId=uploads", headers: caller.headers)
                #expect(second.accessKeyId == "ASIASTUB1" && alias.read(Components.Schemas.STSToken.self)?.accessKeyId == "ASIASTUB1")
                #expect(alias.headers[.cacheControl] == "no-store")
                #expect(await sts.callCount == 1)
                let metrics = String(buffer: try await server.client.execute(uri: "/metrics", method: .get).body)
                #expect(metrics.contains(#"gatehouse_sts_upstream_calls_total{provider="aws"} 1"#))

                // A role change forgets the cache; twenty concurrent requests then make one call.
                #expect(
                    try await server.send(.patch, "/v1/admin/apps/\(caller.app.appKey)/roles/uploads", body: #"{"durationSeconds":1200}"#).status
                        == .ok
                )
                let keys = try await withThrowingTaskGroup(of: String?.self) { group in
                    for _ in 0..<20 {
                        group.addTask { try await Self.token(server, caller, role: "uploads").read(Components.Schemas.STSToken.self)?.accessKeyId }
                    }
                    return try await group.reduce(into: Set<String?>()) { $0.insert($1) }
                }
                #expect(keys == ["ASIASTUB2"])
                #expect(await sts.callCount == 2)
            }
        }
    }

    @Test(arguments: TestStoreKind.available)
    func credentialsCloseToExpiryAreNeverHandedOut(kind: TestStoreKind) async throws {
        let clock = FixedClock(Date())
        let sts = StubSTS(accessKeyID: "AKIASTUB", secret: "stub-long-term-secret", clock: clock)
        try await sts.serve { stsURL in
            try await withServer(kind, clock: clock) { server in
                // The attestation token outlives the clock jump; SDK calls would not (their timestamps are real).
                let caller = try await Self.attestedCaller(server, tokenLifetime: 3600)
                try await Self.createRole(server, caller, "uploads", sts: stsURL, extra: #","durationSeconds":900"#)
                #expect(try await Self.token(server, caller, role: "uploads").read(Components.Schemas.STSToken.self)?.accessKeyId == "ASIASTUB1")
                // 650 s on, the cached credentials have 250 s left: under the SDKs' 5 minutes. A failing
                // upstream then gets a 502, never those credentials.
                clock.advance(by: 650)
                let later = caller
                await sts.set(.unavailable)
                let refused = try await Self.token(server, later, role: "uploads")
                #expect(refused.status == .badGateway && refused.read(Components.Schemas.STSToken.self) == nil)
                await sts.set(.credentials)
                #expect(try await Self.token(server, later, role: "uploads").read(Components.Schemas.STSToken.self)?.accessKeyId == "ASIASTUB2")
            }
        }
    }

    @Test(arguments: TestStoreKind.available)
    func refusalsKeepTheSeedsShapeAndNeverLeakTheKey(kind: TestStoreKind) async throws {
        let sts = StubSTS(accessKeyID: "AKIASTUB", secret: "stub-long-term-secret")
        try await sts.serve { stsURL in
            try await withServer(kind) { server in
                let caller = try await Self.attestedCaller(server)
                try await Self.createRole(server, caller, "uploads", sts: stsURL)
                func refused(
                    _ query: String = "",
                    headers: HTTPFields? = nil,
                    role: String = "uploads"
                ) async throws -> (HTTPResponse.Status, String?) {
                    let response = try await server.send(
                        .get,
                        "/v1/sts/token?appKey=\(caller.app.appKey)&roleId=\(role)\(query)",
                        headers: headers ?? caller.headers
                    )
                    let text = String(decoding: response.body, as: UTF8.self)
                    let refusal = response.read(Components.Schemas.STSError.self)
                    #expect(!text.contains("stub-long-term-secret") && refusal?.statusCode == Int(response.status.code), "\(text)")
                    return (response.status, refusal?.errorCode)
                }
                #expect(try await refused(headers: [:]) == (.unauthorized, "attestation_required"))
                #expect(try await refused(headers: [HTTPField.Name("EO-Attest-Token")!: "x.y.z"]) == (.unauthorized, "attestation_required"))
                #expect(try await refused(role: "nope") == (.notFound, "role_not_found"))
                #expect(try await refused("&accountId=bob") == (.forbidden, "account_not_vouched"))
                #expect(try await server.send(.get, "/v1/sts/token?appKey=\(caller.app.appKey)", headers: caller.headers).status == .badRequest)

                await sts.set(.unavailable)
                #expect(try await refused() == (.badGateway, "UpstreamUnavailable"))
                #expect(await sts.callCount == 3)
                await sts.set(.refuse)
                #expect(try await refused() == (.badGateway, "UpstreamRefused"))
                #expect(await sts.callCount == 4)
                await sts.set(.garbage)
                #expect(try await refused() == (.badGateway, "UpstreamGarbled"))
                // A redirect is never followed: one call, and the answer is no credentials.
                await sts.set(.redirect)
                let callsBeforeRedirect = await sts.callCount
                #expect(try await refused() == (.badGateway, "UpstreamGarbled"))
                #expect(await sts.callCount == callsBeforeRedirect + 1)
                await sts.set(.shortLived)
                #expect(try await refused() == (.badGateway, "UpstreamGarbled"))
                // A wrong long-term key is the provider's SignatureDoesNotMatch, reported as a refusal.
                let rekeyed = try await server.send(
                    .patch,
                    "/v1/admin/apps/\(caller.app.appKey)/roles/uploads",
                    body: #"{"accessKeyId":"AKIASTUB","accessKeySecret":"a-wrong-secret"}"#
                )
                #expect(rekeyed.status == .ok)
                await sts.set(.credentials)
                #expect(try await refused() == (.badGateway, "UpstreamRefused"))

                // A role that needs a recent risk decision refuses a device whose latest decision is reject.
                try await Self.createRole(server, caller, "strict", sts: stsURL, extra: #","requireRiskDecision":true"#)
                let denied = try await server.send(
                    .post,
                    "/v1/admin/apps/\(caller.app.appKey)/risk/lists",
                    body: #"{"list":"deny","type":"device","value":"\#(caller.device)"}"#
                )
                #expect(denied.status == .created)
                _ = try await Flow.query(
                    server,
                    caller.app,
                    try await Flow.ztoken(server, caller.app, device: caller.device, account: "alice"),
                    account: "alice"
                )
                #expect(try await refused(role: "strict") == (.forbidden, "risk_decision_required"))

                // A device the backend never vouched for gets nothing from a role whose policy names the account.
                let stranger = try await Flow.startDevice(server, caller.app, clientID: "stranger")
                let payload = try Attest.solve(try await Attest.challenge(server, caller.app, "login-pow", stranger))
                let token = try await Attest.redeem(server, caller.app, "login-pow", stranger, payload).decoded(
                    Components.Schemas.AttestTokenResponse.self
                ).token
                #expect(try await refused(headers: [HTTPField.Name("EO-Attest-Token")!: token]) == (.forbidden, "account_not_vouched"))
            }
        }
    }

    @Test(arguments: TestStoreKind.available)
    func selfSignedModeSignsOnlyWhatThePolicyAllows(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let caller = try await Self.attestedCaller(server)
            let template =
                #"{"Version":"1","Statement":[{"Effect":"Allow","Action":["oss:GetObject","oss:PutObject"],"Resource":"acs:oss:*:*:photos/users/${accountId}/*"}]}"#
            let role =
                #"{"roleId":"oss","provider":"alibaba","stsEndpoint":"https://sts.cn-hangzhou.aliyuncs.com","region":"cn-hangzhou","#
                + #""roleArn":"acs:ram::1234567890123:role/uploads","attestId":"login-pow","accessKeyId":"LTAIlongterm","#
                + #""accessKeySecret":"long-term-secret","selfSigned":true,"policyTemplate":\#(STSRoleFlowTests.json(template))}"#
            #expect(try await server.send(.post, "/v1/admin/apps/\(caller.app.appKey)/roles", body: role).status == .created)
            func sign(_ content: String) async throws -> TestResponse {
                try await server.send(
                    .post,
                    "/v1/oss/sign",
                    headers: caller.headers + [.contentType: "application/json"],
                    body: #"{"appKey":"\#(caller.app.appKey)","roleId":"oss","content":\#(STSRoleFlowTests.json(content))}"#
                )
            }
            let now = UTCTime(Date()).http
            let put = "PUT\n\nimage/jpeg\n\(now)\nx-oss-meta-app:shop\n/photos/users/alice/a.jpg"
            let signed = try await sign(put)
            let expected = "OSS LTAIlongterm:" + OSSV1Signature.signature(stringToSign: put, secret: "long-term-secret")
            #expect(signed.status == .ok && signed.read(Components.Schemas.OSSSignResponse.self)?.authorization == expected, "\(signed.json ?? [:])")
            let refusals: [(String, HTTPResponse.Status, String)] = [
                ("PUT\n\n\n\(now)\n/photos/users/bob/a.jpg", .forbidden, "storage_access_denied"),
                ("DELETE\n\n\n\(now)\n/photos/users/alice/a.jpg", .forbidden, "storage_access_denied"),
                ("PUT\n\n\n\(now)\n/photos/users/alice/a.jpg?cors", .forbidden, "storage_access_denied"),
                ("PUT\n\n\n\(UTCTime(Date().addingTimeInterval(-86400)).http)\n/photos/users/alice/a.jpg", .badRequest, "invalid_string_to_sign"),
                ("GET\n\n\n\(Int(Date().timeIntervalSince1970) + 86400)\n/photos/users/alice/a.jpg", .badRequest, "invalid_string_to_sign"),
                ("PUT\n\n\n\(now)\n/photos/users/alice/a.jpg?unknown", .badRequest, "invalid_string_to_sign"),
                ("not a string to sign", .badRequest, "invalid_string_to_sign"),
            ]
            for (content, status, code) in refusals {
                let answer = try await sign(content)
                #expect(
                    answer.status == status && answer.read(Components.Schemas.STSError.self)?.errorCode == code,
                    "\(content): \(answer.json ?? [:])"
                )
            }
        }
    }

    @Test(arguments: TestStoreKind.available)
    func presignedURLsAndSelfSignedStringsStayWithinThePolicy(kind: TestStoreKind) async throws {
        let sts = StubSTS(accessKeyID: "AKIASTUB", secret: "stub-long-term-secret")
        try await sts.serve { stsURL in
            try await withServer(kind) { server in
                let caller = try await Self.attestedCaller(server)
                try await Self.createRole(server, caller, "uploads", sts: stsURL)
                func presign(_ body: String) async throws -> TestResponse {
                    try await server.send(
                        .post,
                        "/v1/storage/presign",
                        headers: caller.headers + [.contentType: "application/json"],
                        body: #"{"appKey":"\#(caller.app.appKey)","roleId":"uploads",\#(body)}"#
                    )
                }
                let presigned = try await presign(
                    #""method":"PUT","bucket":"photos","key":"users/alice/a b.jpg","expiresIn":600,"contentType":"image/jpeg""#
                )
                #expect(presigned.status == .ok, "\(presigned.json ?? [:])")
                let put = try presigned.decoded(Components.Schemas.PresignResponse.self)
                let url = put.url
                #expect(
                    url.hasPrefix("http://127.0.0.1:9000/photos/users/alice/a%20b.jpg?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=ASIASTUB1%2F")
                )
                #expect(url.contains("X-Amz-SignedHeaders=content-type%3Bhost&X-Amz-Security-Token=token%261&X-Amz-Signature="))
                #expect(put.method == .put && put.statusCode == 200)
                let outside = try await presign(#""method":"GET","bucket":"photos","key":"users/bob/a.jpg","expiresIn":600"#)
                #expect(outside.status == .forbidden && outside.read(Components.Schemas.STSError.self)?.errorCode == "storage_access_denied")
                let tooLong = try await presign(#""method":"GET","bucket":"photos","key":"users/alice/a.jpg","expiresIn":3301"#)
                #expect(tooLong.status == .badRequest && tooLong.read(Components.Schemas.STSError.self)?.errorCode == "invalid_presign_request")
                let typedGet = try await presign(
                    #""method":"GET","bucket":"photos","key":"users/alice/a.jpg","expiresIn":60,"contentType":"image/png""#
                )
                #expect(typedGet.status == .badRequest)

                // Self-signed mode is for alibaba roles that say so; this aws role refuses.
                let sign = try await server.send(
                    .post,
                    "/v1/oss/sign",
                    headers: caller.headers + [.contentType: "application/json"],
                    body:
                        #"{"appKey":"\#(caller.app.appKey)","roleId":"uploads","content":"GET\n\n\n\#(UTCTime(Date()).http)\n/photos/users/alice/a.jpg"}"#
                )
                #expect(sign.status == .forbidden && sign.read(Components.Schemas.STSError.self)?.errorCode == "storage_access_denied")
            }
        }
    }
}
