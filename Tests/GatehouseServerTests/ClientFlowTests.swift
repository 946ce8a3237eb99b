import Foundation
import GatehouseClient
import GatehouseCore
import GatehouseHummingbird
import GatehouseTestSupport
import HTTPTypes
import Hummingbird
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The seeds' flows through `GatehouseClient` alone (URLSession over loopback), against the built
/// server on both stores: device risk, app protection with secondary verification, attestation with
/// a 428 and retry at an app's backend, token binding, and STS credentials.
@Suite struct ClientFlowTests {
    typealias Flow = DeviceRiskFlowTests

    static func gatehouse(_ server: ServerFixture, _ app: Flow.AppCredentials, logs: LogLines? = nil) -> Gatehouse {
        Gatehouse(
            .init(
                baseURL: server.baseURL,
                appKey: app.appKey,
                secretKey: app.secretKey,
                clientDeviceID: "client-test",
                logLevel: logs == nil ? .none : .debug,
                logSink: { _, line in logs?.append(line) }
            )
        )
    }

    final class LogLines: @unchecked Sendable {
        private let lock = NSLock()
        private var lines: [String] = []
        func append(_ line: String) { lock.withLock { lines.append(line) } }
        var all: [String] { lock.withLock { lines } }
    }

    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var value = 0
        func increment() { lock.withLock { value += 1 } }
        var count: Int { lock.withLock { value } }
    }

    @Test(arguments: TestStoreKind.available)
    func deviceRiskAndAppProtectionThroughTheClient(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Flow.createApp(server)
            let logs = LogLines()
            let client = Self.gatehouse(server, app, logs: logs)
            let ready = Counter()
            await client.onReady { _ in ready.increment() }
            await #expect(throws: GatehouseClientError.notStarted) { try await client.zToken(event: 3301, account: "alice") }
            let device = try await client.start()
            try await client.start()
            #expect(ready.count == 1)

            // Device risk: the ztoken goes to the app's backend, which asks for a decision.
            let ztoken = try await client.zToken(event: 3301, account: "alice")
            #expect(try await client.zToken(event: 3301, account: "alice") != ztoken)
            let decision = try await Flow.query(server, app, ztoken, account: "alice")
            #expect(decision["tokenState"] as? String == "fresh" && decision["deviceId"] as? String == device)
            #expect(!logs.all.joined().contains(ztoken) && logs.all.contains { $0.contains("device started") })
            await #expect(throws: GatehouseClientError.self) { try await client.zToken(event: 3399, account: "alice") }

            // App protection: a signed POST the backend verifies; the operator's challenge list makes
            // it a secondary verification; cptCheck sees the marker; the captcha pass lets the retry in.
            let listed = try await server.send(
                .post,
                "/v1/admin/apps/\(app.appKey)/risk/lists",
                body: #"{"list":"challenge","type":"device","value":"\#(device)"}"#
            )
            #expect(listed.status == .created)
            var request = URLRequest(url: URL(string: "https://api.example.com/v1/transfer")!)
            request.httpMethod = "POST"
            request.httpBody = Data(#"{"amount":100}"#.utf8)
            try await client.requestSigner().sign(&request)
            let challenged = try await SignatureFlowTests.verify(server, app, request)
            let marker = try #require(challenged["marker"] as? [String: Any])
            let body = try JSONSerialization.data(withJSONObject: try #require(marker["body"] as? [String: Any]))
            #expect(Gatehouse.cptCheck(cookie: marker["cookie"] as? String, body: nil) == 1 && Gatehouse.cptCheck(cookie: nil, body: body) == 1)
            #expect(Gatehouse.cptCheck(cookie: "session=1", body: Data("{}".utf8)) == 0)
            let pass = try await CaptchaFlowTests.pass(server, app.appKey, attestID: nil, device: device)
            var retry = URLRequest(url: request.url!)
            retry.httpMethod = "POST"
            retry.httpBody = request.httpBody
            try await client.requestSigner().sign(&retry)
            let allowed = try await SignatureFlowTests.verify(server, app, retry, extra: #""captchaPassToken":"\#(pass)""#)
            #expect(allowed["verdict"] as? String == "allow" && allowed["captchaPassAccepted"] as? Bool == true)
        }
    }

    @Test(arguments: TestStoreKind.available)
    func attestationRetriesA428AndBindsTokens(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Flow.createApp(server)
            for body in [
                #"{"attestId":"login-pow","pow":{"maxNumber":2000},"bindHeader":"Authorization","adaptive":false}"#,
                #"{"attestId":"pay-v2","pow":{"format":"altcha-v2","cost":20,"keyPrefix":"0"},"adaptive":false}"#,
            ] {
                #expect(try await server.send(.post, "/v1/admin/apps/\(app.appKey)/attesters", body: body).status == .created)
            }
            let client = Self.gatehouse(server, app)
            try await client.start()

            // An app's backend protected by the in-process middleware: 428 first, the client attests
            // (binding the token to the Authorization it sends) and retries once.
            await client.bind(value: "Bearer user-1")
            let router = Router()
            let hits = Counter()
            router.add(
                middleware: AttestationMiddleware(
                    .init(appKey: try AppKey(validating: app.appKey), attestID: try AttestID(validating: "login-pow"), bindHeader: "Authorization"),
                    jwks: JWKSCache(url: server.baseURL.absoluteString + "/.well-known/jwks.json")
                )
            )
            router.get("api/data") { _, _ in
                hits.increment()
                return "protected"
            }
            try await withLoopbackServer(router) { backend in
                let session = AttestingSession(gatehouse: client)
                var request = URLRequest(url: backend.appendingPathComponent("api/data"))
                request.setValue("Bearer user-1", forHTTPHeaderField: "Authorization")
                let (data, response) = try await session.data(for: request)
                #expect(response.statusCode == 200 && String(decoding: data, as: UTF8.self) == "protected" && hits.count == 1)
                // With the token prefetched, the next request carries it up front.
                let warm = AttestingSession(gatehouse: client, attestID: "login-pow")
                let (_, again) = try await warm.data(for: request)
                #expect(again.statusCode == 200 && hits.count == 2)
            }

            // Binding: the token's pay claim is the bound value's hash; a new binding drops the old token.
            let bound = try await client.attestationToken(attestID: "login-pow")
            let checked = try await server.send(
                .post,
                "/v1/attest/introspect",
                headers: app.backend,
                body: #"{"token":"\#(bound.token)","attestId":"login-pow","boundValue":"Bearer user-1"}"#
            )
            #expect(checked.json?["active"] as? Bool == true, "\(checked.json ?? [:])")
            await client.bind(value: "Bearer user-2")
            let rebound = try await client.attestationToken(attestID: "login-pow")
            #expect(rebound.token != bound.token && rebound.boundValue == "Bearer user-2")

            // ALTCHA v2 (PBKDF2) challenges are solved too.
            await client.bind(value: nil)
            let v2 = try await client.attest(attestID: "pay-v2")
            #expect(v2.header == "EO-Attest-Token" && v2.boundValue == nil)
            await #expect(throws: GatehouseClientError.self) { try await client.attest(attestID: "no-such-attester") }
        }
    }

    @Test(arguments: TestStoreKind.available)
    func federationTokensComeFromTheRoleAndAreReused(kind: TestStoreKind) async throws {
        let sts = StubSTS(accessKeyID: "AKIASTUB", secret: "stub-long-term-secret")
        try await sts.serve { stsURL in
            try await withServer(kind) { server in
                let caller = try await StorageFlowTests.attestedCaller(server)
                try await StorageFlowTests.createRole(server, caller, "uploads", sts: stsURL, extra: #","durationSeconds":900"#)
                let client = Self.gatehouse(server, caller.app)
                try await client.start()
                // The client's own device needs the backend's word for its account, like any device.
                _ = try await Flow.query(server, caller.app, try await client.zToken(event: 3301, account: "alice"), account: "alice")
                let token = try await client.federationToken(roleID: "uploads", attestID: "login-pow")
                #expect(token.accessKeyID.hasPrefix("ASIASTUB") && token.securityToken.hasPrefix("token&"))
                #expect(token.expiration.timeIntervalSinceNow > 800 && token.expirationInGMTFormat.hasSuffix("Z"))
                let again = try await client.federationToken(roleID: "uploads", attestID: "login-pow")
                let calls = await sts.callCount
                #expect(again == token && calls == 1)
                await #expect(throws: GatehouseClientError.self) { try await client.federationToken(roleID: "nope", attestID: "login-pow") }
            }
        }
    }
}
