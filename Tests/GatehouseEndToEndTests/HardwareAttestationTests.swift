import Crypto
import Foundation
import GatehouseClient
import GatehouseSigning
import GatehouseTestDevice
import GatehouseTestSupport
import Hummingbird
import Testing
import X509

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Hardware attestation end to end: a software App Attest device (its throwaway root trusted through
/// the test-only setting) attests through GatehouseClient, passes the nginx gate on a route that
/// requires hardware, refreshes its token with assertions, and every replay fails; a device attested
/// by proof-of-work is refused on that route with 428.
@Suite(.serialized) struct HardwareAttestationTests {
    static let teamID = "TEAMID1234"
    static let bundleID = "com.example.shop"

    @Test(.enabled(if: Peers.required || Peers.nginxAvailable), arguments: TestStoreKind.available)
    func aHardwareDevicePassesTheGateAndAReplayFails(kind: TestStoreKind) async throws {
        let device = try SoftwareAppAttestDevice(teamID: Self.teamID, bundleID: Self.bundleID, development: true)
        let roots = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-test-roots-\(UUID().uuidString).pem")
        try device.root.serializeAsPEM().pemString.write(to: roots, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: roots) }

        try await BuiltServer.with(kind, environment: ["GATEHOUSE_TEST_ATTESTATION_ROOTS": roots.path]) { server in
            let app = try await RegisteredApp.create(server)
            try await SeedFlowTests.createAttester(
                server,
                app,
                #"{"attestId":"api-pow","pow":{"maxNumber":2000},"adaptive":false,"maxUses":1,"routes":[{"method":"*","pathPrefix":"/api/"}]}"#
            )
            try await SeedFlowTests.createAttester(
                server,
                app,
                """
                {"attestId":"ios-hardware","kind":"appAttest","appAttest":{"teamId":"\(Self.teamID)","bundleIds":["\(Self.bundleID)"],
                 "environment":"development"},"routes":[{"method":"*","pathPrefix":"/api/pay/"}]}
                """
            )
            let router = Router()
            router.get("api/pay/orders") { _, _ in "paid" }
            router.get("api/orders") { _, _ in "orders" }
            try await withLoopbackServer(router) { appAPI in
                try await Peers.withNginx(gatehouse: [server.baseURL], appAPI: appAPI, credentials: app.backendCredentials) { gate, _ in
                    let payURL = gate.appendingPathComponent("api/pay/orders")
                    let phone = Gatehouse(
                        .init(baseURL: server.baseURL, appKey: app.appKey, secretKey: app.secretKey, clientDeviceID: "hw-phone", appAttest: device)
                    )
                    try await phone.start()

                    // The first request meets the 428; the client attests its new key and retries.
                    let (body, response) = try await AttestingSession(gatehouse: phone).data(for: URLRequest(url: payURL))
                    #expect(response.statusCode == 200 && String(decoding: body, as: UTF8.self) == "paid")
                    let keyID = try #require(await phone.appAttestKeyID)

                    // Later tokens come from assertions by the same key, and say hardware too.
                    let refreshed = try await phone.attest(attestID: "ios-hardware")
                    let claims = try Self.claims(refreshed.token)
                    #expect(claims["att"] as? String == "app_attest" && claims["integrity"] as? String == "secure_enclave")
                    #expect(await phone.appAttestKeyID == keyID)
                    let passed = try await HTTP.send(.GET, payURL, headers: [refreshed.header: refreshed.token])
                    #expect(passed.status == 200)

                    // Replays, by hand: the same request twice, an assertion over another nonce, an old counter.
                    let deviceID = try #require(await phone.deviceID)
                    let sdk = SDKCalls(server: server, app: app, deviceID: deviceID)
                    let nonce = try await sdk.nonce()
                    let assertion = try device.generateAssertion(keyID, clientDataHash: Data(SHA256.hash(data: Data(nonce.utf8))))
                    let request = ["nonce": nonce, "keyId": keyID, "assertion": assertion.base64EncodedString()]
                    #expect(try await sdk.token(request).status == 200)
                    #expect(try await sdk.token(request).reason == "attestation_nonce_reused")
                    var otherNonce = request
                    otherNonce["nonce"] = try await sdk.nonce()
                    #expect(try await sdk.token(otherNonce).reason == "invalid_assertion_signature")
                    let (first, second) = (try await sdk.nonce(), try await sdk.nonce())
                    let older = try device.generateAssertion(keyID, clientDataHash: Data(SHA256.hash(data: Data(first.utf8))))
                    let newer = try device.generateAssertion(keyID, clientDataHash: Data(SHA256.hash(data: Data(second.utf8))))
                    #expect(try await sdk.token(["nonce": second, "keyId": keyID, "assertion": newer.base64EncodedString()]).status == 200)
                    #expect(
                        try await sdk.token(["nonce": first, "keyId": keyID, "assertion": older.base64EncodedString()]).reason
                            == "attestation_counter_invalid"
                    )

                    // A device attested by proof-of-work gets its token, and the hardware route still says 428.
                    let powPhone = Gatehouse(
                        .init(baseURL: server.baseURL, appKey: app.appKey, secretKey: app.secretKey, clientDeviceID: "pow-phone")
                    )
                    try await powPhone.start()
                    let powToken = try await powPhone.attest(attestID: "api-pow")
                    #expect(try Self.claims(powToken.token)["att"] == nil)
                    let refused = try await HTTP.send(.GET, payURL, headers: [powToken.header: powToken.token])
                    #expect(refused.status == 428 && refused.headers.first(name: AttestingSession.challengeHeader) == "ios-hardware")
                    // That refusal spent none of the single-use token's one use: it still opens its own route once.
                    let ordersURL = gate.appendingPathComponent("api/orders")
                    #expect(try await HTTP.send(.GET, ordersURL, headers: [powToken.header: powToken.token]).status == 200)
                    #expect(try await HTTP.send(.GET, ordersURL, headers: [powToken.header: powToken.token]).status == 428)
                    await #expect(throws: GatehouseClientError.hardwareAttestationUnavailable) {
                        try await AttestingSession(gatehouse: powPhone).data(for: URLRequest(url: payURL))
                    }

                    // A fresh single-use PoW token for the storage check (the one above is spent).
                    let unspent = try await powPhone.attest(attestID: "api-pow")
                    try await Self.riskAndStorage(server, app, hardware: (phone, refreshed), pow: (powPhone, unspent))
                }
            }
        }
    }

    /// The hardware device's risk decision says so (and the PoW device's says it is missing, since the
    /// app requires hardware); a role that requires hardware refuses the PoW device's token and lets
    /// the hardware device's through to its STS (here an endpoint nobody listens on).
    static func riskAndStorage(
        _ server: BuiltServer,
        _ app: RegisteredApp,
        hardware: (Gatehouse, Gatehouse.AttestationToken),
        pow: (Gatehouse, Gatehouse.AttestationToken)
    ) async throws {
        let backend = SeedFlowTests.backend(server, app)
        let hardwareTags = try await backend.queryRisk(
            ztoken: try hardware.0.zToken(event: 3301, account: "alice"),
            eventID: 3301,
            accountID: "alice",
            clientIP: "203.0.113.7"
        ).tags.map(\.tag)
        #expect(hardwareTags.contains("attestation.hardware") && !hardwareTags.contains("attestation.missing"), "\(hardwareTags)")
        let powTags = try await backend.queryRisk(
            ztoken: try pow.0.zToken(event: 3301, account: "bob"),
            eventID: 3301,
            accountID: "bob",
            clientIP: "203.0.113.8"
        ).tags.map(\.tag)
        #expect(powTags.contains("attestation.missing") && !powTags.contains("attestation.hardware"), "\(powTags)")

        // An STS that refuses every call at once: what matters is that the hardware device gets past
        // Gatehouse's own check to it.
        let sts = Router()
        sts.post("/") { _, _ in
            Response(
                status: .forbidden,
                body: .init(byteBuffer: ByteBuffer(string: "<ErrorResponse><Error><Code>AccessDenied</Code></Error></ErrorResponse>"))
            )
        }
        try await withLoopbackServer(sts) { stsURL in
            for (roleID, attestID) in [("pow-uploads", "api-pow"), ("hardware-uploads", "ios-hardware")] {
                let role = try await server.admin(
                    .POST,
                    "v1/admin/apps/\(app.appKey)/roles",
                    #"{"roleId":"\#(roleID)","provider":"aws","stsEndpoint":"\#(stsURL.absoluteString)","region":"us-east-1","#
                        + #""roleArn":"arn:aws:iam::123456789012:role/uploads","attestId":"\#(attestID)","requireHardwareAttestation":true,"#
                        + #""accessKeyId":"AKIAEXAMPLE","accessKeySecret":"not-a-real-secret"}"#
                )
                #expect(role.status == 201, "\(role.body)")
            }
            let tokenURL = server.baseURL.appendingPathComponent("v1/sts/token").absoluteString
            let refused = try await HTTP.send(
                .GET,
                URL(string: "\(tokenURL)?appKey=\(app.appKey)&roleId=pow-uploads")!,
                headers: [pow.1.header: pow.1.token]
            )
            #expect(refused.status == 403 && refused.body.contains("hardware_attestation_required"), "\(refused.body)")
            let upstream = try await HTTP.send(
                .GET,
                URL(string: "\(tokenURL)?appKey=\(app.appKey)&roleId=hardware-uploads")!,
                headers: [hardware.1.header: hardware.1.token]
            )
            #expect(upstream.body.contains("AccessDenied") && !upstream.body.contains("hardware_attestation_required"), "\(upstream.body)")
        }
    }

    static func claims(_ token: String) throws -> [String: Any] {
        let parts = token.split(separator: ".")
        let payload = try #require(parts.count == 3 ? Base64URL.decode(String(parts[1])) : nil)
        return try #require(try JSONSerialization.jsonObject(with: Data(payload)) as? [String: Any])
    }

    /// The SDK's two attestation calls made by hand (signed as the SDK signs them), to replay them.
    struct SDKCalls {
        let server: BuiltServer
        let app: RegisteredApp
        let deviceID: String
        var attestID = "ios-hardware"

        func nonce() async throws -> String {
            try #require(try await challenge().json?["nonce"] as? String)
        }

        func challenge() async throws -> HTTP.Answer {
            try await call("/v1/attest/challenges", ["attestId": attestID, "deviceId": deviceID])
        }

        func token(_ fields: [String: String]) async throws -> (status: Int, reason: String?) {
            let answer = try await tokenAnswer(fields)
            return (answer.status, answer.json?["reason"] as? String)
        }

        func tokenAnswer(_ fields: [String: String]) async throws -> HTTP.Answer {
            try await call("/v1/attest/tokens", fields.merging(["attestId": attestID, "deviceId": deviceID]) { given, _ in given })
        }

        private func call(_ path: String, _ body: [String: String]) async throws -> HTTP.Answer {
            let data = try JSONSerialization.data(withJSONObject: body)
            var headers = Dictionary(
                SDKRequestSigning.headers(appKey: app.appKey, secretKey: app.secretKey, method: "POST", path: path, body: data),
                uniquingKeysWith: { first, _ in first }
            )
            headers["Content-Type"] = "application/json"
            return try await HTTP.send(.POST, server.baseURL.appendingPathComponent(String(path.dropFirst())), headers: headers, body: data)
        }
    }
}
