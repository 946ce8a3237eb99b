import Foundation
import GatehouseAPI
import GatehouseClient
import GatehouseCore
import GatehouseServer
import GatehouseStore
import GatehouseTestSupport
import HTTPTypes
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Request signatures made by the Swift client's `RequestSigner` and verified over loopback HTTP:
/// both modes, every failure reason from a request that should produce it, secondary verification
/// with a captcha pass, and replay across two instances on one PostgreSQL.
@Suite struct SignatureFlowTests {
    typealias Flow = DeviceRiskFlowTests

    static func startSigner(_ server: ServerFixture, _ app: Flow.AppCredentials, clientID: String = "device-1") async throws -> RequestSigner {
        let body = #"{"deviceId":"\#(clientID)","collectType":0,"platform":"ios","unique":{"idfv":"IDFV-\#(clientID)"}}"#
        let started = try await Flow.sdk(server, app, "/v1/sdk/device/start", body).decoded(Components.Schemas.DeviceStartResponse.self)
        return try #require(RequestSigner(deviceID: started.deviceId, deviceKey: started.deviceKey))
    }

    /// A request as the app would send it, signed by the client code.
    static func signed(
        _ signer: RequestSigner,
        _ method: String,
        _ url: URL,
        body: String? = nil,
        mode: RequestSigner.Mode,
        at date: Date = Date()
    )
        -> URLRequest
    {
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.httpBody = body.map { Data($0.utf8) }
        signer.sign(&request, mode: mode, at: date)
        return request
    }

    static func json(_ value: String?) -> String {
        guard let value else { return "null" }
        let data = try! JSONSerialization.data(withJSONObject: [value], options: [.withoutEscapingSlashes])
        return String(String(data: data, encoding: .utf8)!.dropFirst().dropLast())
    }

    /// What the app's backend forwards: method, URL as received, body, the two headers.
    static func verify(
        _ server: ServerFixture,
        _ app: Flow.AppCredentials,
        _ request: URLRequest,
        url: String? = nil,
        body: String? = nil,
        extra: String = ""
    ) async throws -> Components.Schemas.SignatureVerifyResponse {
        var fields = [
            #""method":\#(json(request.httpMethod ?? "GET"))"#, #""url":\#(json(url ?? request.url!.absoluteString))"#,
        ]
        if let text = body ?? request.httpBody.map({ String(decoding: $0, as: UTF8.self) }) { fields.append(#""body":\#(json(text))"#) }
        if let wtoken = request.value(forHTTPHeaderField: "wToken") { fields.append(#""wtoken":\#(json(wtoken))"#) }
        if let whash = request.value(forHTTPHeaderField: "ali_sign_whash") { fields.append(#""whash":\#(json(whash))"#) }
        let verified = try await server.send(
            .post,
            "/v1/signatures/verify",
            headers: app.backend,
            body: "{" + (fields + (extra.isEmpty ? [] : [extra])).joined(separator: ",") + "}"
        )
        #expect(verified.status == .ok, "\(verified.json ?? [:])")
        return try verified.decoded()
    }

    static let nonASCII: URL = {
        var components = URLComponents(string: "https://api.example.com")!
        components.path = "/商品/列表"
        components.queryItems = [.init(name: "q", value: "绿茶 & tea"), .init(name: "page", value: "2")]
        return components.url!
    }()

    @Test(arguments: TestStoreKind.available)
    func signedRequestsVerifyInBothModes(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Flow.createApp(server)
            let signer = try await Self.startSigner(server, app)
            let api = URL(string: "https://api.example.com/v1/orders")!
            let cases: [(String, URL, String?, RequestSigner.Mode, String)] = [
                ("GET", Self.nonASCII, nil, .custom, "custom"),
                ("GET", Self.nonASCII, nil, .default, "default"),
                ("POST", api, #"{"sku":"A-1","qty":2,"note":"绿茶"}"#, .custom, "custom"),
                ("POST", api, #"{"sku":"A-1","qty":2}"#, .default, "default"),
                ("POST", api, nil, .default, "default"),
                ("POST", api, "", .custom, "custom"),
                ("PUT", api, "x", .custom, "custom"),
                ("DELETE", api.appendingPathComponent("17"), nil, .custom, "custom"),
            ]
            for (method, url, body, mode, expected) in cases {
                let request = Self.signed(signer, method, url, body: body, mode: mode)
                let result = try await Self.verify(server, app, request)
                #expect(result.valid && result.verdict == .allow, "\(method) \(url) \(mode): \(result)")
                #expect(result.mode?.rawValue == expected && result.deviceId == signer.deviceID)
            }
        }
    }

    @Test(arguments: TestStoreKind.available)
    func everyFailureHasItsReason(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Flow.createApp(server)
            let signer = try await Self.startSigner(server, app)
            let other = try await Self.startSigner(server, app, clientID: "device-2")
            let api = URL(string: "https://api.example.com/v1/orders")!
            func reason(_ request: URLRequest, url: String? = nil, body: String? = nil) async throws -> String? {
                let result = try await Self.verify(server, app, request, url: url, body: body)
                #expect(result.verdict == (result.valid ? .allow : .block))
                return result.reason?.rawValue
            }
            func with(_ request: URLRequest, wtoken: String?, whash: String?? = .none) -> URLRequest {
                var changed = request
                changed.setValue(wtoken, forHTTPHeaderField: "wToken")
                if case .some(let value) = whash { changed.setValue(value, forHTTPHeaderField: "ali_sign_whash") }
                return changed
            }
            let post = Self.signed(signer, "POST", api, body: #"{"qty":2}"#, mode: .custom)
            let token = try #require(post.value(forHTTPHeaderField: "wToken"))

            #expect(try await reason(with(post, wtoken: nil)) == "missingHeader")
            #expect(try await reason(with(post, wtoken: "")) == "missingHeader")
            #expect(try await reason(with(post, wtoken: token, whash: "")) == "missingHeader")
            #expect(try await reason(with(post, wtoken: "not a token")) == "malformed")
            #expect(try await reason(with(post, wtoken: token + String(repeating: "A", count: 600))) == "malformed")
            #expect(try await reason(with(post, wtoken: String(token.dropLast(3)) + "!!!")) == "malformed")
            #expect(try await reason(with(post, wtoken: token, whash: "%%%")) == "malformed")
            // The body changed by one byte: custom mode sees the whash no longer match, default mode the MAC.
            #expect(try await reason(post, body: #"{"qty":3}"#) == "hashMismatch")
            let plain = Self.signed(signer, "POST", api, body: #"{"qty":2}"#, mode: .default)
            #expect(try await reason(plain, body: #"{"qty":3}"#) == "badSignature")
            // The URL decoded, not as it was sent on the wire: a different string was hashed.
            let get = Self.signed(signer, "GET", Self.nonASCII, mode: .custom)
            #expect(try await reason(get, url: Self.nonASCII.absoluteString.removingPercentEncoding) == "hashMismatch")
            // Another device's key under this device's id; a timestamp from yesterday; a never-started device.
            let forger = try #require(RequestSigner(deviceID: signer.deviceID, deviceKey: RequestSigningKeys.key(of: other)))
            #expect(try await reason(Self.signed(forger, "POST", api, body: "{}", mode: .custom)) == "badSignature")
            #expect(
                try await reason(Self.signed(signer, "POST", api, body: "{}", mode: .custom, at: Date().addingTimeInterval(-86_400)))
                    == "staleTimestamp"
            )
            let stranger = try #require(RequestSigner(deviceID: "AAAAAAAAAAAAAAAAAAAAAA", deviceKey: RequestSigningKeys.key(of: other)))
            #expect(try await reason(Self.signed(stranger, "POST", api, body: "{}", mode: .custom)) == "unknownDevice")
            // The same signed request twice.
            let once = Self.signed(signer, "POST", api, body: "{}", mode: .custom)
            #expect(try await reason(once) == nil)
            #expect(try await reason(once) == "replayed")
            // A device start rotates the key: what the old key signs no longer verifies.
            let renewed = try await Self.startSigner(server, app)
            #expect(renewed.deviceID == signer.deviceID)
            #expect(try await reason(Self.signed(signer, "POST", api, body: "{}", mode: .custom)) == "badSignature")
            #expect(try await reason(Self.signed(renewed, "POST", api, body: "{}", mode: .custom)) == nil)
            // Those failures (3 bad MACs, a stale clock, a replay) make an adaptive attester harder.
            let attester = try await server.send(
                .post,
                "/v1/admin/apps/\(app.appKey)/attesters",
                body: #"{"attestId":"adaptive-pow","adaptive":true,"pow":{"maxNumber":1000}}"#
            )
            #expect(attester.status == .created)
            let harder = try await AttestationFlowTests.challenge(server, app, "adaptive-pow", signer.deviceID)
            #expect(harder.read(Components.Schemas.AttestChallengeResponse.self)?.level == 1)
            let fresh = try await Self.startSigner(server, app, clientID: "device-3")
            let calm = try await AttestationFlowTests.challenge(server, app, "adaptive-pow", fresh.deviceID)
            #expect(calm.read(Components.Schemas.AttestChallengeResponse.self)?.level == 0)

            // Operators deny the device: its signatures fail with deviceBlocked.
            let denied = try await server.send(
                .post,
                "/v1/admin/apps/\(app.appKey)/risk/lists",
                body: #"{"list":"deny","type":"device","value":"\#(signer.deviceID)"}"#
            )
            #expect(denied.status == .created)
            #expect(try await reason(Self.signed(renewed, "POST", api, body: "{}", mode: .custom)) == "deviceBlocked")

            // Bad input to the endpoint itself is a problem, never a 500.
            for body in [
                #"{"method":"GET","url":"https://x/","body":"a","bodySha256":"00"}"#, #"{"method":"GET","url":"https://x/","bodyBase64":"%%%"}"#,
                #"{"method":"GET"}"#, #"{"method":"GET","url":"https://x/","onFailure":"shrug"}"#,
            ] {
                let refused = try await server.send(.post, "/v1/signatures/verify", headers: app.backend, body: body)
                #expect(refused.status == .badRequest, "\(body)")
            }
            let anonymous = try await server.send(.post, "/v1/signatures/verify", headers: [.contentType: "application/json"], body: "{}")
            #expect(anonymous.status == .unauthorized)
        }
    }

    @Test(arguments: TestStoreKind.available)
    func aChallengedRequestPassesWithTheCaptcha(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Flow.createApp(server)
            let signer = try await Self.startSigner(server, app)
            let api = URL(string: "https://api.example.com/v1/transfer")!
            let forged = try #require(RequestSigner(deviceID: signer.deviceID, deviceKey: String(repeating: "A", count: 43)))
            let challenged = try await Self.verify(
                server,
                app,
                Self.signed(forged, "POST", api, body: "{}", mode: .custom),
                extra: #""onFailure":"challenge""#
            )
            #expect(challenged.verdict == .challenge && challenged.because == "badSignature")
            let marker = try #require(challenged.marker)
            let cookie = marker.cookie
            let body = try JSONEncoder().encode(marker.body)
            // The client reads the marker from the cookie or from the body, and nothing else.
            #expect(SecondaryVerificationCheck.cptCheck(cookie: "session=abc; " + cookie, body: nil) == 1)
            #expect(SecondaryVerificationCheck.cptCheck(cookie: nil, body: body) == 1)
            #expect(SecondaryVerificationCheck.cptCheck(cookie: "session=abc; gatehouse_cpt=0", body: Data(#"{"ok":true}"#.utf8)) == 0)
            let page = try #require(SecondaryVerificationCheck.captchaPage(body: body))
            #expect(page == "captcha?appKey=\(app.appKey)&deviceId=\(signer.deviceID)")

            // The user solves the captcha on this device; the retried request carries the pass, once.
            let pass = try await CaptchaFlowTests.pass(server, app.appKey, attestID: nil, device: signer.deviceID)
            let retry = Self.signed(forged, "POST", api, body: "{}", mode: .custom)
            let passExtra = #""onFailure":"challenge","captchaPassToken":"\#(pass)""#
            let allowed = try await Self.verify(server, app, retry, extra: passExtra)
            #expect(allowed.verdict == .allow && allowed.captchaPassAccepted == true)
            let again = try await Self.verify(server, app, Self.signed(forged, "POST", api, body: "{}", mode: .custom), extra: passExtra)
            #expect(again.verdict == .challenge && again.captchaPassAccepted == false)
            // A pass solved on another device does not count; with policy block no pass helps.
            let elsewhere = try await CaptchaFlowTests.pass(server, app.appKey, attestID: nil, device: "AAAAAAAAAAAAAAAAAAAAAA")
            let foreign = try await Self.verify(
                server,
                app,
                Self.signed(forged, "POST", api, body: "{}", mode: .custom),
                extra: #""onFailure":"challenge","captchaPassToken":"\#(elsewhere)""#
            )
            #expect(foreign.verdict == .challenge && foreign.captchaPassAccepted == false)
            let blocked = try await Self.verify(server, app, Self.signed(forged, "POST", api, body: "{}", mode: .custom))
            #expect(blocked.verdict == .block && blocked.marker == nil)
        }
    }

    @Test(arguments: TestStoreKind.available)
    func theOperatorsChallengeListAsksForTheCaptcha(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Flow.createApp(server)
            let signer = try await Self.startSigner(server, app)
            let api = URL(string: "https://api.example.com/v1/transfer")!
            func listed(_ type: String, _ value: String) async throws {
                let entry = try await server.send(
                    .post,
                    "/v1/admin/apps/\(app.appKey)/risk/lists",
                    body: #"{"list":"challenge","type":"\#(type)","value":"\#(value)"}"#
                )
                #expect(entry.status == .created && entry.read(Components.Schemas.RiskListEntry.self)?.list == .challenge)
            }
            func verdict(_ extra: String = "") async throws -> Components.Schemas.SignatureVerifyResponse {
                try await Self.verify(server, app, Self.signed(signer, "POST", api, body: "{}", mode: .custom), extra: extra)
            }
            #expect(try await verdict().verdict == .allow)
            try await listed("account", "mallory")
            try await listed("cidr", "198.51.100.0/24")
            #expect(try await verdict(#""accountId":"alice""#).verdict == .allow)
            let byAccount = try await verdict(#""accountId":"mallory""#)
            #expect(byAccount.valid && byAccount.verdict == .challenge)
            #expect(byAccount.because == "operator_rule" && byAccount.marker != nil)
            #expect(try await verdict(#""clientIp":"198.51.100.7""#).because == "operator_rule")
            let badAddress = try await server.send(
                .post,
                "/v1/signatures/verify",
                headers: app.backend,
                body: #"{"method":"GET","url":"https://api.example.com/","clientIp":"198.51.100"}"#
            )
            #expect(badAddress.status == .badRequest && badAddress.problem?.field == "clientIp")

            // Listing the device itself needs no help from the backend; the captcha pass lets it through once.
            try await listed("device", signer.deviceID)
            #expect(try await verdict().because == "operator_rule")
            let pass = try await CaptchaFlowTests.pass(server, app.appKey, attestID: nil, device: signer.deviceID)
            let allowed = try await verdict(#""captchaPassToken":"\#(pass)""#)
            #expect(allowed.verdict == .allow && allowed.captchaPassAccepted == true)
            #expect(try await verdict().verdict == .challenge)
        }
    }

    @Test(arguments: TestStoreKind.available)
    func theGateRequiresASignatureWhenTheAttesterSaysSo(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Flow.createApp(server)
            let signer = try await Self.startSigner(server, app)
            let created = try await server.send(
                .post,
                "/v1/admin/apps/\(app.appKey)/attesters",
                body:
                    #"{"attestId":"signed-api","adaptive":false,"pow":{"maxNumber":1000},"requireSignature":true,"routes":[{"method":"*","pathPrefix":"/api/"}]}"#
            )
            #expect(created.status == .created && created.read(Components.Schemas.AttesterResult.self)?.attester.requireSignature == true)
            let payload = try AttestationFlowTests.solve(try await AttestationFlowTests.challenge(server, app, "signed-api", signer.deviceID))
            let token = try await AttestationFlowTests.redeem(server, app, "signed-api", signer.deviceID, payload)
                .decoded(Components.Schemas.AttestTokenResponse.self).token
            func gate(_ request: URLRequest) async throws -> (HTTPResponse.Status, String?) {
                let url = request.url!
                var headers: HTTPFields = [
                    HTTPField.Name("X-Gatehouse-Authorization")!: app.backend[.authorization]!,
                    HTTPField.Name("X-Original-Method")!: request.httpMethod ?? "GET",
                    HTTPField.Name("X-Original-URI")!: url.path + (url.query.map { "?" + $0 } ?? ""),
                    HTTPField.Name("X-Original-URL")!: url.absoluteString,
                    HTTPField.Name("EO-Attest-Token")!: token,
                ]
                for name in ["wToken", "ali_sign_whash"] {
                    if let value = request.value(forHTTPHeaderField: name) { headers[HTTPField.Name(name)!] = value }
                }
                let answer = try await server.send(.get, "/v1/gate/verify", headers: headers)
                return (answer.status, answer.headers[HTTPField.Name("X-Gatehouse-Signature-Reason")!])
            }
            let orders = URL(string: "https://api.example.com/api/orders?page=2")!
            let signedGet = Self.signed(signer, "GET", orders, mode: .custom)
            #expect(try await gate(signedGet) == (.noContent, nil))
            #expect(try await gate(signedGet) == (.forbidden, "replayed"))
            #expect(try await gate(URLRequest(url: orders)) == (.forbidden, "missingHeader"))
            // The gate never sees bodies: a POST must use custom signing, whose MAC covers the whash.
            #expect(try await gate(Self.signed(signer, "POST", orders, body: "{}", mode: .custom)) == (.noContent, nil))
            #expect(try await gate(Self.signed(signer, "POST", orders, body: "{}", mode: .default)) == (.forbidden, "missingHeader"))
            var tampered = Self.signed(signer, "GET", orders, mode: .custom)
            tampered.url = URL(string: "https://api.example.com/api/orders?page=3")!
            #expect(try await gate(tampered) == (.forbidden, "hashMismatch"))
        }
    }

    @Test func aReplayAcrossTwoInstancesPassesOnce() async throws {
        guard TestStoreKind.available.contains(.postgres) else { return }
        try await withTwoServers { first, second in
            let app = try await Flow.createApp(first)
            let signer = try await Self.startSigner(first, app)
            for _ in 0..<5 {
                let request = Self.signed(signer, "POST", URL(string: "https://api.example.com/v1/pay")!, body: #"{"amount":5}"#, mode: .custom)
                async let a = Self.verify(first, app, request)
                async let b = Self.verify(second, app, request)
                let results = try await [a, b]
                #expect(results.filter { $0.valid }.count == 1)
                #expect(results.filter { $0.reason?.rawValue == "replayed" }.count == 1)
            }
        }
    }
}

/// The raw key a signer holds, to build deliberately wrong signers in tests.
enum RequestSigningKeys {
    static func key(of signer: RequestSigner) -> String {
        let mirror = Mirror(reflecting: signer)
        let bytes = mirror.children.first { $0.label == "deviceKey" }?.value as? [UInt8] ?? []
        return Base64URL.encode(bytes)
    }
}
