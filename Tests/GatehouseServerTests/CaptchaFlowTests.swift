import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseOperations
import GatehouseServer
import GatehouseStore
import GatehouseTestSupport
import HTTPTypes
import Testing

/// The slider captcha over loopback HTTP on both stores: puzzles, judged answers, attempts, pass
/// tokens through siteverify, and every refusal in the seed's codes or Turnstile's.
/// What the slider's answers and refusals both carry: its code (0, 1001-1003), a reason, what is left.
struct SliderResult: Decodable {
    let code: Int
    let reason: String?
    let attemptsLeft: Int?
    let passToken: String?
}

extension TestResponse {
    var slider: SliderResult? { read(SliderResult.self) }
}

@Suite struct CaptchaFlowTests {
    typealias Flow = DeviceRiskFlowTests
    static let json: HTTPFields = [.contentType: "application/json"]

    static func newChallenge(_ server: ServerFixture, _ appKey: String, extra: String = "") async throws -> (id: String, answer: PuzzleAnswer) {
        let created = try await server.send(.post, "/v1/captcha/challenges", headers: json, body: #"{"appKey":"\#(appKey)"\#(extra)}"#)
        #expect(created.status == .ok)
        #expect(created.headers[.accessControlAllowOrigin] == "*")
        let challenge = try created.decoded(Components.Schemas.CaptchaChallenge.self)
        let id = challenge.challengeId
        #expect(challenge.traceId == id && challenge.background.hasPrefix("data:image/png;base64,"))
        return (id, try await answer(server, appKey, id))
    }

    static func answer(_ server: ServerFixture, _ appKey: String, _ id: String) async throws -> PuzzleAnswer {
        try await captchaAnswer(server.store.location, appKey: appKey, challengeID: id)
    }

    static func trajectoryJSON(_ points: [DragPoint]) -> String {
        "[" + points.map { #"{"x":\#($0.x),"y":\#($0.y),"t":\#($0.t)}"# }.joined(separator: ",") + "]"
    }

    static func submit(
        _ server: ServerFixture,
        _ appKey: String,
        _ id: String,
        position: Double,
        trajectory: [DragPoint]? = nil
    ) async throws -> TestResponse {
        let points = trajectory ?? DragSamples.human(to: position)
        let body = #"{"appKey":"\#(appKey)","position":\#(position),"durationMs":\#(points.last!.t + 30),"trajectory":\#(trajectoryJSON(points))}"#
        return try await server.send(.post, "/v1/captcha/challenges/\(id)/answers", headers: json, body: body)
    }

    static func siteverify(
        _ server: ServerFixture,
        _ app: Flow.AppCredentials,
        _ token: String,
        extra: String = ""
    ) async throws
        -> Components.Schemas.SiteverifyResponse
    {
        let form = "secret=\(app.appKey)%3A\(app.serverSecret)&response=\(token)\(extra)"
        let verified = try await server.send(
            .post,
            "/v1/captcha/siteverify",
            headers: [.contentType: "application/x-www-form-urlencoded"],
            body: form
        )
        #expect(verified.status == .ok)
        return try verified.decoded()
    }

    @Test(arguments: TestStoreKind.available)
    func aPassIsEarnedOnceAndRedeemedOnce(kind: TestStoreKind) async throws {
        let clock = FixedClock(Date())
        try await withServer(kind, clock: clock) { server in
            let app = try await Flow.createApp(server)
            let (id, answer) = try await Self.newChallenge(server, app.appKey, extra: #","action":"login","cdata":"c-1","language":"cn""#)
            let missed = try await Self.submit(server, app.appKey, id, position: Double(answer.x) + 30)
            #expect(missed.status == .ok)
            #expect(missed.slider?.code == 1001 && missed.slider?.reason == "wrong_position")
            #expect(missed.slider?.attemptsLeft == 2)
            let passed = try await Self.submit(server, app.appKey, id, position: Double(answer.x) + 2)
            #expect(passed.slider?.code == 0)
            let token = try #require(passed.slider?.passToken)
            let again = try await Self.submit(server, app.appKey, id, position: Double(answer.x))
            #expect(again.status == .gone && again.slider?.code == 1001 && again.slider?.reason == "captcha_solved")

            let verified = try await Self.siteverify(server, app, token)
            #expect(verified.success == true)
            #expect(verified.action == "login" && verified.cdata == "c-1")
            #expect(verified.hostname == "localhost")
            let metadata = try #require(verified.metadata)
            #expect(metadata.traceId == id && metadata.appKey == app.appKey)
            let duplicate = try await Self.siteverify(server, app, token)
            #expect(duplicate.success == false && duplicate.errorCodes.map(\.rawValue) == ["timeout-or-duplicate"])

            // A pass nobody redeemed in 300 s has timed out.
            let (late, lateAnswer) = try await Self.newChallenge(server, app.appKey)
            let latePass = try await Self.submit(server, app.appKey, late, position: Double(lateAnswer.x))
            let lateToken = try #require(latePass.slider?.passToken)
            clock.advance(by: 301)
            let expired = try await Self.siteverify(server, app, lateToken)
            #expect(expired.errorCodes.map(\.rawValue) == ["timeout-or-duplicate"])
        }
    }

    @Test(arguments: TestStoreKind.available)
    func attemptsRunOutAndChallengesExpire(kind: TestStoreKind) async throws {
        let clock = FixedClock(Date())
        try await withServer(kind, clock: clock) { server in
            let app = try await Flow.createApp(server)
            let (id, answer) = try await Self.newChallenge(server, app.appKey)
            let robotic = (0...20).map { DragPoint(x: Double(answer.x) * Double($0) / 20, y: 0, t: Double($0) * 40) }
            let first = try await Self.submit(server, app.appKey, id, position: Double(answer.x), trajectory: robotic)
            #expect(first.slider?.code == 1001 && first.slider?.reason == "constant_speed")
            for left in [1, 0] {
                let miss = try await Self.submit(server, app.appKey, id, position: Double(answer.x) - 40)
                #expect(miss.slider?.attemptsLeft == left)
            }
            let dead = try await Self.submit(server, app.appKey, id, position: Double(answer.x))
            #expect(dead.status == .gone && dead.slider?.reason == "captcha_exhausted" && dead.slider?.code == 1001)

            let (stale, staleAnswer) = try await Self.newChallenge(server, app.appKey)
            clock.advance(by: CaptchaChallenge.lifetimeSeconds + 1)
            let expired = try await Self.submit(server, app.appKey, stale, position: Double(staleAnswer.x))
            #expect(expired.status == .gone && expired.slider?.reason == "captcha_expired")

            let unknown = try await Self.submit(server, app.appKey, "AAAAAAAAAAAAAAAAAAAAAA", position: 100)
            #expect(unknown.status == .notFound && unknown.slider?.code == 1001)
            let otherApp = try await Flow.createApp(server)
            let (foreign, _) = try await Self.newChallenge(server, otherApp.appKey)
            let crossed = try await Self.submit(server, app.appKey, foreign, position: 100)
            #expect(crossed.status == .notFound && crossed.slider?.reason == "captcha_not_found")
        }
    }

    @Test(arguments: TestStoreKind.available)
    func badInputGetsSeedCodesNeverA500(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Flow.createApp(server)
            let (id, answer) = try await Self.newChallenge(server, app.appKey)
            let path = "/v1/captcha/challenges/\(id)/answers"
            let x = answer.x
            let bodies: [(String, HTTPResponse.Status, String)] = [
                (#"{"appKey":"\#(app.appKey)","position":\#(x),"durationMs":500,"trajectory":[]}"#, .badRequest, "invalid_captcha_answer"),
                (
                    #"{"appKey":"\#(app.appKey)","position":\#(x),"durationMs":500,"trajectory":[{"x":0,"y":0,"t":50},{"x":9,"y":1,"t":10}]}"#,
                    .badRequest,
                    "invalid_captcha_answer"
                ),
                (#"{"appKey":"\#(app.appKey)","position":NaN,"durationMs":500,"trajectory":[]}"#, .badRequest, "malformed_json"),
                (#"{"appKey":"\#(app.appKey)","position":"12","durationMs":500,"trajectory":[]}"#, .badRequest, "invalid_body"),
                (
                    #"{"appKey":"\#(app.appKey)","position":1e999,"durationMs":500,"trajectory":[{"x":0,"y":0,"t":0},{"x":1,"y":1,"t":1}]}"#,
                    .badRequest, "malformed_json"
                ),
                (#"{"appKey":"\#(app.appKey)","position":\#(x),"durationMs":500}"#, .badRequest, "invalid_body"),
                (
                    #"{"appKey":"no!","position":\#(x),"durationMs":930,"trajectory":\#(Self.trajectoryJSON(DragSamples.human(to: Double(x))))}"#,
                    .badRequest,
                    "invalid_app_key"
                ),
            ]
            for (body, status, reason) in bodies {
                let refused = try await server.send(.post, path, headers: Self.json, body: body)
                #expect(refused.status == status, "\(body)")
                #expect(refused.slider?.code == 1003 && refused.slider?.reason == reason, "\(body): \(refused.json ?? [:])")
            }
            // 10,000 points is far over the body limit; the refusal is still in the seed's terms.
            let huge = Self.trajectoryJSON((0..<10_000).map { DragPoint(x: Double($0) / 100, y: 0, t: Double($0)) })
            let oversize = try await server.send(
                .post,
                path,
                headers: Self.json,
                body: #"{"appKey":"\#(app.appKey)","position":\#(x),"durationMs":500,"trajectory":\#(huge)}"#
            )
            #expect(oversize.status == .contentTooLarge && oversize.slider?.code == 1003)
            let wrongType = try await server.send(.post, path, headers: [.contentType: "text/plain"], body: "{}")
            #expect(wrongType.status == .unsupportedMediaType && wrongType.slider?.code == 1003)
            // None of those used an attempt.
            let passed = try await Self.submit(server, app.appKey, id, position: Double(x))
            #expect(passed.slider?.code == 0)

            for (body, status, reason) in [
                (#"{"appKey":"zzzzz"}"#, HTTPResponse.Status.notFound, "app_not_found"),
                (#"{"appKey":"\#(app.appKey)","language":"de"}"#, .badRequest, "invalid_body"),
                (#"{"appKey":"\#(app.appKey)","action":"has space"}"#, .badRequest, "invalid_captcha_request"),
                (#"{"appKey":"\#(app.appKey)","attestId":"no-such"}"#, .notFound, "attester_not_found"),
                (#"{"appKey":"\#(app.appKey)","deviceId":"AAAAAAAAAAAAAAAAAAAAAA"}"#, .ok, ""),
            ] {
                let created = try await server.send(.post, "/v1/captcha/challenges", headers: Self.json, body: body)
                #expect(created.status == status, "\(body)")
                if status != .ok { #expect(created.slider?.reason == reason, "\(body): \(created.json ?? [:])") }
            }
            _ = try await server.send(.post, "/v1/admin/apps/\(app.appKey)/disable", body: "")
            let disabled = try await server.send(.post, "/v1/captcha/challenges", headers: Self.json, body: #"{"appKey":"\#(app.appKey)"}"#)
            #expect(disabled.status == .forbidden && disabled.slider?.reason == "app_disabled")
        }
    }

    @Test(arguments: TestStoreKind.available)
    func siteverifySpeaksTurnstile(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Flow.createApp(server)
            let other = try await Flow.createApp(server)
            let (id, answer) = try await Self.newChallenge(server, app.appKey)
            let token = try #require(try await Self.submit(server, app.appKey, id, position: Double(answer.x)).slider?.passToken)
            // Another app's credentials do not find this app's token, and do not spend it.
            let foreign = try await Self.siteverify(server, other, token)
            #expect(foreign.errorCodes.map(\.rawValue) == ["invalid-input-response"])
            let key = "3f2504e0-4f89-11d3-9a0c-0305e82c3301"
            let first = try await Self.siteverify(server, app, token, extra: "&idempotency_key=\(key)&remoteip=127.0.0.1")
            let retry = try await Self.siteverify(server, app, token, extra: "&idempotency_key=\(key.uppercased())")
            #expect(first.success == true && retry.success == true)
            #expect(first.metadata?.remoteipMatches == true)
            #expect(first.challengeTs == retry.challengeTs)
            let otherKey = try await Self.siteverify(server, app, token, extra: "&idempotency_key=4f2504e0-4f89-11d3-9a0c-0305e82c3301")
            #expect(otherKey.errorCodes.map(\.rawValue) == ["timeout-or-duplicate"])

            let cases: [(HTTPFields, String, String)] = [
                ([.contentType: "application/json"], #"{"secret":"\#(app.appKey):\#(app.serverSecret)","response":5}"#, "bad-request"),
                ([.contentType: "application/json"], "not json", "bad-request"),
                ([.contentType: "application/x-www-form-urlencoded"], "secret=%zz", "bad-request"),
                ([.contentType: "application/x-www-form-urlencoded"], "response=\(token)", "missing-input-secret"),
                ([.contentType: "application/x-www-form-urlencoded"], "secret=\(app.appKey)%3Awrong&response=\(token)", "invalid-input-secret"),
                ([.contentType: "application/json"], #"{"secret":"\#(app.appKey):\#(app.serverSecret)"}"#, "missing-input-response"),
            ]
            for (headers, body, code) in cases {
                let refused = try await server.send(.post, "/v1/captcha/siteverify", headers: headers, body: body)
                #expect(refused.status == (code == "bad-request" ? .badRequest : .ok), "\(body)")
                #expect(
                    refused.read(Components.Schemas.SiteverifyResponse.self)?.errorCodes.map(\.rawValue) == [code],
                    "\(body): \(refused.json ?? [:])"
                )
            }
            let plain = try await server.send(.post, "/v1/captcha/siteverify", headers: [.contentType: "text/plain"], body: "x")
            #expect(plain.status == .unsupportedMediaType)
        }
    }

    @Test(arguments: TestStoreKind.available)
    func challengesAndAnswersAreRateLimited(kind: TestStoreKind) async throws {
        let threePerMinute: @Sendable (inout GatehouseConfiguration) -> Void = { $0.captchaChallengesPerMinute = 3 }
        try await withServer(kind, configure: threePerMinute) { server in
            let app = try await Flow.createApp(server)
            for _ in 0..<3 { _ = try await Self.newChallenge(server, app.appKey) }
            let limited = try await server.send(.post, "/v1/captcha/challenges", headers: Self.json, body: #"{"appKey":"\#(app.appKey)"}"#)
            #expect(
                limited.status == .tooManyRequests && limited.slider?.code == 1002 && limited.slider?.reason == "rate_limited"
            )
            #expect(Int(limited.headers[.retryAfter] ?? "") ?? 0 >= 1)
            // Another address (a proxy's client, trusted here) has its own allowance.
            var forwarded = Self.json
            forwarded[HTTPField.Name("X-Forwarded-For")!] = "203.0.113.9"
            let elsewhere = try await server.send(.post, "/v1/captcha/challenges", headers: forwarded, body: #"{"appKey":"\#(app.appKey)"}"#)
            #expect(elsewhere.status == .ok)
            let preflight = try await server.send(.options, "/v1/captcha/challenges", headers: [:])
            #expect(preflight.status == .noContent && preflight.headers[.accessControlAllowOrigin] == "*")
        }
    }

    @Test(arguments: TestStoreKind.available)
    func thePageIsStaticAndSelfContained(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let page = try await server.client.execute(uri: "/captcha?appKey=%3Cimg%20src=x%3E", method: .get, headers: [:], body: nil)
            let html = String(buffer: page.body)
            #expect(page.status == .ok && !html.contains("<img src=x>") && html.contains(#"<script src="captcha/slider.js"></script>"#))
            let policy = try #require(page.headers[.contentSecurityPolicy])
            #expect(policy.contains("script-src 'self'") && policy.contains("connect-src 'self'") && !policy.contains("unsafe"))
            let script = try await server.client.execute(uri: "/captcha/slider.js", method: .get, headers: [:], body: nil)
            #expect(script.status == .ok && script.headers[.contentType]?.hasPrefix("text/javascript") == true)
            let source = String(buffer: script.body)
            #expect(
                source.contains("messageHandlers") && source.contains("postMessage") && !source.contains("http://") && !source.contains("https://")
            )
            // Framed only by its own origin, and a pass token is never posted to any origin at all.
            #expect(policy.hasSuffix("frame-ancestors 'self'") && !source.contains(#""*""#))
        }
    }

    @Test(arguments: TestStoreKind.available)
    func theEmbeddingOriginsComeFromConfiguration(kind: TestStoreKind) async throws {
        let origins: @Sendable (inout GatehouseConfiguration) -> Void = {
            $0.captchaEmbedOrigins = ["https://shop.example.com", "http://localhost:3000"]
        }
        try await withServer(kind, configure: origins) { server in
            let page = try await server.client.execute(uri: "/captcha", method: .get, headers: [:], body: nil)
            let policy = try #require(page.headers[.contentSecurityPolicy])
            #expect(policy.hasSuffix("frame-ancestors 'self' https://shop.example.com http://localhost:3000"))
            #expect(String(buffer: page.body).contains(#"content="https://shop.example.com http://localhost:3000""#))
        }
    }

    /// Siteverify reads its body as UTF-8 strictly, as every other endpoint does: bytes that are not
    /// UTF-8 never turn into a token that happens to parse.
    @Test(arguments: TestStoreKind.available)
    func siteverifyRefusesBytesThatAreNotUTF8(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let body: [UInt8] = Array("secret=abcde%3Ax&response=gcp_".utf8) + [0xFF, 0xFE] + Array("x".utf8)
            let answer = try await server.send(
                .post,
                "/v1/captcha/siteverify",
                headers: [.contentType: "application/x-www-form-urlencoded"],
                rawBody: body
            )
            #expect(answer.status == .badRequest && answer.problem?.code == "malformed_json")
        }
    }

    /// Solves the captcha for an attester and device, as the page would, and returns the pass token.
    static func pass(_ server: ServerFixture, _ appKey: String, attestID: String?, device: String?) async throws -> String {
        var extra = ""
        if let attestID { extra += #","attestId":"\#(attestID)""# }
        if let device { extra += #","deviceId":"\#(device)""# }
        let (id, answer) = try await newChallenge(server, appKey, extra: extra)
        return try #require(try await submit(server, appKey, id, position: Double(answer.x)).slider?.passToken)
    }

    @Test(arguments: TestStoreKind.available)
    func captchaAttestersTakeAPassForTheirDeviceOnce(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Flow.createApp(server)
            let device = try await Flow.startDevice(server, app)
            let otherDevice = try await Flow.startDevice(server, app, clientID: "device-2")
            for (id, kind) in [("login-captcha", "captcha"), ("pay-both", "pow+captcha"), ("plain-pow", "pow")] {
                let created = try await server.send(
                    .post,
                    "/v1/admin/apps/\(app.appKey)/attesters",
                    body: #"{"attestId":"\#(id)","kind":"\#(kind)","pow":{"maxNumber":1000}}"#
                )
                #expect(created.status == .created, "\(created.json ?? [:])")
            }
            func redeem(
                _ attestID: String,
                payload: String? = nil,
                pass: String? = nil,
                device: String = device
            ) async throws -> TestResponse {
                var body = #"{"attestId":"\#(attestID)","deviceId":"\#(device)""#
                if let payload { body += #","payload":"\#(payload)""# }
                if let pass { body += #","captchaPassToken":"\#(pass)""# }
                return try await Flow.sdk(server, app, "/v1/attest/tokens", body + "}")
            }

            // captcha: no proof-of-work, a pass solved for this attester and device, once.
            let challenge = try await AttestationFlowTests.challenge(server, app, "login-captcha", device).decoded(
                Components.Schemas.AttestChallengeResponse.self
            )
            #expect(challenge.kind == .captcha && challenge.challenge == nil && challenge.captchaRequired)
            #expect(challenge.captchaPage == "captcha?appKey=\(app.appKey)&attestId=login-captcha&deviceId=\(device)")
            #expect(try await redeem("login-captcha").sdkRefusal?.reason == "invalid_captcha_pass")
            let pass = try await Self.pass(server, app.appKey, attestID: "login-captcha", device: device)
            let issued = try await redeem("login-captcha", pass: pass)
            #expect(issued.read(Components.Schemas.AttestTokenResponse.self) != nil)
            #expect(try await redeem("login-captcha", pass: pass).sdkRefusal?.reason == "invalid_captcha_pass")
            // The pass is spent for siteverify too.
            #expect(try await Self.siteverify(server, app, pass).errorCodes.map(\.rawValue) == ["timeout-or-duplicate"])
            // A pass for no attester, another attester or another device does not open it.
            for (attestID, passDevice) in [(nil, device), ("pay-both", device), ("login-captcha", otherDevice)] as [(String?, String)] {
                let stray = try await Self.pass(server, app.appKey, attestID: attestID, device: passDevice)
                let refused = try await redeem("login-captcha", pass: stray)
                #expect(refused.sdkRefusal?.reason == "invalid_captcha_pass", "\(attestID ?? "none") \(passDevice): \(refused.json ?? [:])")
            }

            // pow+captcha: both, each once.
            let both = try await AttestationFlowTests.challenge(server, app, "pay-both", device)
            let bothChallenge = try both.decoded(Components.Schemas.AttestChallengeResponse.self)
            #expect(bothChallenge.captchaRequired && bothChallenge.challenge != nil)
            let solved = try AttestationFlowTests.solve(both)
            let bothPass = try await Self.pass(server, app.appKey, attestID: "pay-both", device: device)
            #expect(try await redeem("pay-both", pass: bothPass).sdkRefusal?.reason == "invalid_pow_payload")
            #expect(try await redeem("pay-both", payload: solved, pass: bothPass).read(Components.Schemas.AttestTokenResponse.self) != nil)

            // pow, adaptive: a deny-listed device must also solve the captcha.
            let quiet = try await AttestationFlowTests.challenge(server, app, "plain-pow", device)
            let quietChallenge = try quiet.decoded(Components.Schemas.AttestChallengeResponse.self)
            #expect(!quietChallenge.captchaRequired && quietChallenge.captchaPage == nil)
            _ = try await server.send(
                .post,
                "/v1/admin/apps/\(app.appKey)/risk/lists",
                body: #"{"list":"deny","type":"device","value":"\#(device)"}"#
            )
            let risky = try await AttestationFlowTests.challenge(server, app, "plain-pow", device)
            let riskyChallenge = try risky.decoded(Components.Schemas.AttestChallengeResponse.self)
            #expect(riskyChallenge.level == 3 && riskyChallenge.captchaRequired)
            let riskySolved = try AttestationFlowTests.solve(risky)
            #expect(try await redeem("plain-pow", payload: riskySolved).sdkRefusal?.reason == "invalid_captcha_pass")
            let riskyPass = try await Self.pass(server, app.appKey, attestID: "plain-pow", device: device)
            let riskyAgain = try AttestationFlowTests.solve(try await AttestationFlowTests.challenge(server, app, "plain-pow", device))
            #expect(try await redeem("plain-pow", payload: riskyAgain, pass: riskyPass).read(Components.Schemas.AttestTokenResponse.self) != nil)
        }
    }
}
