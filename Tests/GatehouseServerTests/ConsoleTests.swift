import Crypto
import Foundation
import GatehouseCore
import GatehouseOperations
import GatehouseServer
import GatehouseStore
import GatehouseTestSupport
import HTTPTypes
import Testing

/// The operator console over loopback HTTP, on both stores: sign-in, the session cookie, form
/// tokens, roles, timeouts, and the pages reading what the API writes.
@Suite struct ConsoleTests {
    typealias Flow = DeviceRiskFlowTests

    /// A signed-in browser: its cookie, and the form token its pages carry.
    struct Browser {
        let cookie: String
        let csrf: String
        var headers: HTTPFields { [.cookie: "\(ConsoleSession.cookieName)=\(cookie)"] }

        func form(_ fields: String, extra: HTTPFields = [:]) -> HTTPFields {
            var headers = self.headers
            headers[.contentType] = "application/x-www-form-urlencoded"
            headers.append(contentsOf: extra)
            return headers
        }
    }

    static func signIn(_ server: ServerFixture, token: String) async throws -> Browser {
        let form: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
        let signedIn = try await server.send(.post, "/console/sign-in", headers: form, body: "token=\(token)")
        #expect(signedIn.status == .seeOther && signedIn.headers[.location] == "/console")
        let setCookie = try #require(signedIn.headers[.setCookie])
        #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict") && setCookie.contains("Path=/console"))
        #expect(!setCookie.contains("Secure"), "plain HTTP from a peer that is no trusted proxy")
        let cookie = String(setCookie.split(separator: ";")[0].split(separator: "=", maxSplits: 1)[1])
        let page = try await server.send(.get, "/console", headers: [.cookie: "\(ConsoleSession.cookieName)=\(cookie)"])
        #expect(page.status == .ok)
        let csrf = try #require(Self.csrf(in: page.text))
        return Browser(cookie: cookie, csrf: csrf)
    }

    static func csrf(in html: String) -> String? {
        guard let range = html.range(of: #"name="csrf" value=""#) else { return nil }
        return String(html[range.upperBound...].prefix { $0 != "\"" })
    }

    static func viewerToken(_ server: ServerFixture, name: String = "watcher") async throws -> String {
        try await StoreService.withStore(server.store.location, logger: TestDatabase.logger) { store in
            try await AdminTokenOperations(store: store.admin, clock: SystemClock()).create(
                name: name,
                role: .viewer,
                origin: ChangeOrigin(actor: Actor(kind: .cli, name: "test"), requestID: nil, sourceAddress: nil)
            )
        }
    }

    @Test(arguments: TestStoreKind.available)
    func signInCreatesAnAppOnlyWithTheFormToken(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let away = try await server.send(.get, "/console", headers: [:])
            #expect(away.status == .seeOther && away.headers[.location] == "/console/sign-in")
            let form: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
            for token in ["gat_" + String(repeating: "A", count: 43), "not-a-token", ""] {
                let refused = try await server.send(.post, "/console/sign-in", headers: form, body: "token=\(token)")
                #expect(refused.status == .unauthorized && refused.headers[.setCookie] == nil, "\(token)")
            }
            // What goes wrong before any session is a page too, with the API's status and code.
            let huge = try await server.send(.post, "/console/sign-in", headers: form, body: "token=" + String(repeating: "a", count: 70_000))
            #expect(huge.status == .contentTooLarge && huge.headers[.contentType]?.hasPrefix("text/html") == true)
            let json = try await server.send(.post, "/console/sign-in", headers: [.contentType: "application/json"], body: "{}")
            #expect(json.status == .unsupportedMediaType && json.text.contains("unsupported_media_type"))
            var crossSite = form
            crossSite[.origin] = "https://evil.example"
            let forgedSignIn = try await server.send(.post, "/console/sign-in", headers: crossSite, body: "token=\(server.adminToken)")
            #expect(forgedSignIn.status == .forbidden && forgedSignIn.headers[.setCookie] == nil)

            let browser = try await Self.signIn(server, token: server.adminToken)
            let apps = try await server.send(.get, "/console", headers: browser.headers)
            #expect(apps.text.contains(#"id="create-app""#) && apps.headers[.contentSecurityPolicy]?.contains("frame-ancestors 'none'") == true)
            #expect(apps.headers[.cacheControl] == "no-store")

            let fields = "name=Shop&platform_ios=1"
            let forgeries: [(String, HTTPFields)] = [
                (fields, browser.form(fields)),
                (fields + "&csrf=wrong", browser.form(fields)),
                (fields + "&csrf=\(browser.csrf)", browser.form(fields, extra: [.origin: "https://evil.example"])),
                (fields + "&csrf=\(browser.csrf)", browser.form(fields, extra: [HTTPField.Name("Sec-Fetch-Site")!: "cross-site"])),
                (fields + "&csrf=\(browser.csrf)", browser.form(fields, extra: [.origin: "null"])),
            ]
            for (body, headers) in forgeries {
                let refused = try await server.send(.post, "/console/apps", headers: headers, body: body)
                #expect(refused.status == .forbidden && refused.text.contains("console_form_refused"), "\(body) \(headers)")
            }
            let created = try await server.send(.post, "/console/apps", headers: browser.form(fields), body: fields + "&csrf=\(browser.csrf)")
            #expect(created.status == .created && created.text.contains(#"id="secret-key""#) && created.text.contains(#"id="server-secret""#))
            let list = try await server.send(.get, "/v1/admin/apps").json?["items"] as? [[String: Any]]
            #expect(list?.count == 1, "only the post with the form token made an app")
            let audit = try await server.send(.get, "/v1/admin/audit").json?["items"] as? [[String: Any]]
            #expect(audit?.first?["actor"] as? String == "admin-token:test" && audit?.first?["action"] as? String == "app.create")

            let invalid = try await server.send(.post, "/console/apps", headers: browser.form(""), body: "name=&csrf=\(browser.csrf)")
            #expect(invalid.status == .badRequest && invalid.text.contains("invalid_app_name"), "the API's rule and code, as a page")

            // The audit page filters as the API does: an action, an actor, a time range; empty fields are
            // no filter, a malformed one the API's 400 as a page.
            let byAction = try await server.send(.get, "/console/audit?appKey=&action=app.create&actor=admin-token%3Atest", headers: browser.headers)
            #expect(byAction.status == .ok && byAction.text.contains("<code>app.create</code>"))
            let byOtherAction = try await server.send(.get, "/console/audit?action=event.register", headers: browser.headers)
            #expect(
                byOtherAction.status == .ok && byOtherAction.text.contains("Nothing recorded.")
                    && !byOtherAction.text.contains("<code>app.create</code>")
            )
            let byOther = try await server.send(.get, "/console/audit?actor=cli%3Anobody", headers: browser.headers)
            #expect(byOther.status == .ok && byOther.text.contains("Nothing recorded."))
            let future = try await server.send(.get, "/console/audit?from=2099-01-01T00:00:00Z", headers: browser.headers)
            #expect(future.status == .ok && future.text.contains("Nothing recorded."))
            for query in ["action=APP", "actor=nobody", "from=soon", "appKey=zzzzz"] {
                let refused = try await server.send(.get, "/console/audit?\(query)", headers: browser.headers)
                #expect([400, 404].contains(refused.status.code) && refused.headers[.contentType]?.hasPrefix("text/html") == true, "\(query)")
            }
        }
    }

    @Test(arguments: TestStoreKind.available)
    func aViewerSeesNoWriteControlAndIsRefusedEveryChange(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Flow.createApp(server)
            let viewer = try await Self.signIn(server, token: try await Self.viewerToken(server))
            let pages = [
                "/console", "/console/apps/\(app.appKey)", "/console/apps/\(app.appKey)/risk", "/console/apps/\(app.appKey)/attesters",
                "/console/apps/\(app.appKey)/roles", "/console/signing-keys", "/console/decisions", "/console/audit",
                "/console/apps/\(app.appKey)/overview",
            ]
            for path in pages {
                let page = try await server.send(.get, path, headers: viewer.headers)
                #expect(page.status == .ok, "\(path)")
                let posts = page.text.components(separatedBy: #"method="post""#).count - 1
                #expect(posts == 1 && page.text.contains(#"action="/console/sign-out""#), "\(path): the sign-out form only")
            }
            let auditBefore = try await server.send(.get, "/v1/admin/audit").body
            for (path, fields) in [
                ("/console/apps", "name=Other&platform_ios=1"), ("/console/apps/\(app.appKey)/disable", ""),
                ("/console/apps/\(app.appKey)/events", "eventId=3302&name=pay"), ("/console/apps/\(app.appKey)/risk/rules", "scope=app&rejectAt=50"),
                ("/console/signing-keys/rotate", ""),
            ] {
                let refused = try await server.send(.post, path, headers: viewer.form(fields), body: fields + "&csrf=\(viewer.csrf)")
                #expect(refused.status == .forbidden && refused.text.contains("admin_token_read_only"), "\(path)")
            }
            #expect(try await server.send(.get, "/v1/admin/audit").body == auditBefore, "nothing changed")
            // Signing out needs the form token too, and ends the session for good.
            let notOut = try await server.send(.post, "/console/sign-out", headers: viewer.form(""), body: "csrf=wrong")
            #expect(notOut.status == .forbidden)
            let out = try await server.send(.post, "/console/sign-out", headers: viewer.form(""), body: "csrf=\(viewer.csrf)")
            #expect(out.status == .seeOther && out.headers[.setCookie]?.contains("Max-Age=0") == true)
            let after = try await server.send(.get, "/console", headers: viewer.headers)
            #expect(after.status == .seeOther && after.headers[.location]?.hasPrefix("/console/sign-in") == true)
        }
    }

    @Test(arguments: TestStoreKind.available)
    func aSessionEndsWhenIdleWhenOldAndWithItsToken(kind: TestStoreKind) async throws {
        let clock = FixedClock(Date())
        try await withServer(kind, clock: clock) { server in
            let browser = try await Self.signIn(server, token: server.adminToken)
            // Each request within the idle timeout keeps it alive, up to its lifetime.
            var elapsed: TimeInterval = 0
            while elapsed + 25 * 60 < ConsoleSession.lifetime {
                clock.advance(by: 25 * 60)
                elapsed += 25 * 60
                #expect(try await server.send(.get, "/console", headers: browser.headers).status == .ok, "after \(elapsed) s")
            }
            clock.advance(by: ConsoleSession.lifetime - elapsed)
            #expect(try await server.send(.get, "/console", headers: browser.headers).status == .seeOther, "past its lifetime")

            let idle = try await Self.signIn(server, token: server.adminToken)
            clock.advance(by: ConsoleSession.idleTimeout + 1)
            let ended = try await server.send(.get, "/console", headers: idle.headers)
            #expect(ended.status == .seeOther && ended.headers[.location] == "/console/sign-in?ended=1")

            let name = "short-lived"
            let token = try await Self.viewerToken(server, name: name)
            let revoked = try await Self.signIn(server, token: token)
            try await StoreService.withStore(server.store.location, logger: TestDatabase.logger) { store in
                try await AdminTokenOperations(store: store.admin, clock: clock).revoke(
                    name: name,
                    origin: ChangeOrigin(actor: Actor(kind: .cli, name: "test"), requestID: nil, sourceAddress: nil)
                )
            }
            #expect(try await server.send(.get, "/console", headers: revoked.headers).status == .seeOther, "its token was revoked")
        }
    }

    @Test(arguments: TestStoreKind.available)
    func theOverviewAndTheExplorerShowADecision(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Flow.createApp(server)
            let device = try await Flow.startDevice(server, app, clientID: "console-device")
            let token = try await Flow.ztoken(server, app, device: device)
            let first = try await Flow.query(server, app, token)
            let replayed = try await Flow.query(server, app, token)
            #expect(replayed.decision == .reject)
            let browser = try await Self.signIn(server, token: server.adminToken)

            let overview = try await server.send(.get, "/console/apps/\(app.appKey)/overview?window=1h", headers: browser.headers)
            #expect(overview.status == .ok)
            #expect(overview.text.contains(#"class="bar-reject""#) && overview.text.contains(#"id="total-reject">1<"#))
            #expect(overview.text.contains("token.replayed") && overview.text.contains("127.0.0.1"))
            let badWindow = try await server.send(.get, "/console/apps/\(app.appKey)/overview?window=1y", headers: browser.headers)
            #expect(badWindow.status == .badRequest && badWindow.text.contains("invalid_parameter"))

            let found = try await server.send(
                .get,
                "/console/decisions?appKey=\(app.appKey)&deviceId=\(device)&tag=&decision=",
                headers: browser.headers
            )
            #expect(found.status == .ok && found.text.contains(first.decisionId) && found.text.contains(replayed.decisionId))
            let rejected = try await server.send(.get, "/console/decisions?deviceId=\(device)&tag=token.replayed", headers: browser.headers)
            #expect(rejected.text.contains(replayed.decisionId) && !rejected.text.contains(first.decisionId))
            let byAddress = try await server.send(.get, "/console/decisions?address=127.0.0.1&decision=pass", headers: browser.headers)
            #expect(byAddress.text.contains(first.decisionId) == (first.decision == .pass))
            for bad in ["address=not-an-ip", "tag=device.unicorn", "eventId=abc", "from=yesterday", "cursor=x"] {
                let refused = try await server.send(.get, "/console/decisions?\(bad)", headers: browser.headers)
                #expect(refused.status == .badRequest, "\(bad)")
            }
            let one = try await server.send(.get, "/console/apps/\(app.appKey)/decisions/\(replayed.decisionId)", headers: browser.headers)
            #expect(one.status == .ok && one.text.contains("token.replayed") && one.text.contains(device))
            let missing = try await server.send(.get, "/console/apps/\(app.appKey)/decisions/\(UUID().uuidString)", headers: browser.headers)
            #expect(missing.status == .notFound && missing.text.contains("decision_not_found"))
            // The API's explorer takes the same two new filters.
            let api = try await server.send(.get, "/v1/admin/risk/decisions?deviceId=\(device)&tag=token.replayed")
            #expect((api.json?["items"] as? [[String: Any]])?.count == 1)
        }
    }
}

extension TestResponse {
    var text: String { String(decoding: body, as: UTF8.self) }
}

extension ConsoleTests {
    /// The console's attester form makes a playIntegrity attester; its keys, typed once, are on no page after.
    @Test(arguments: TestStoreKind.available)
    func aPlayIntegrityAttesterFromTheFormShowsNoSecret(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let browser = try await Self.signIn(server, token: server.adminToken)
            let created = try await server.send(.post, "/v1/admin/apps", body: #"{"name":"Shop","platforms":["android"]}"#)
            let appKey = try #require((created.json?["app"] as? [String: Any])?["appKey"] as? String)
            let decryption = Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString()
            let verification = P256.Signing.PrivateKey().publicKey.derRepresentation.base64EncodedString()
            func escaped(_ text: String) -> String { text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "" }
            let fields = [
                "attestId=android-pi", "kind=playIntegrity", "packageNames=com.example.shop",
                "signingDigests=9lD7Dz3AjKHi2Cz4hAT3iiRVsivz3cRi-Bq6j7sZcxE", "minimumIntegrity=strong", "modeClassic=1",
                "decryptionKey=\(escaped(decryption))", "verificationKey=\(escaped(verification))", "csrf=\(browser.csrf)",
            ].joined(separator: "&")
            let page = try await server.send(.post, "/console/apps/\(appKey)/attesters", headers: browser.form(fields), body: fields)
            #expect([201, 303].contains(Int(page.status.code)), "\(page.status) \(page.text.prefix(400))")
            let shown = try await server.send(.get, "/console/apps/\(appKey)/attesters/android-pi", headers: browser.headers)
            #expect(shown.status == .ok && shown.text.contains("minimumIntegrity strong") && !shown.text.contains(decryption), "\(shown.text)")
            let audit = try await server.send(.get, "/v1/admin/audit")
            #expect(audit.text.contains("decryptionKey") && !audit.text.contains(decryption), "names of replaced secrets, never values")
            // Standard mode without its service account is the API's refusal, as a page.
            let missing = fields.replacingOccurrences(of: "attestId=android-pi", with: "attestId=pi-two") + "&modeStandard=1"
            let refused = try await server.send(.post, "/console/apps/\(appKey)/attesters", headers: browser.form(missing), body: missing)
            #expect(refused.status == .badRequest && refused.text.contains("serviceAccount"), "\(refused.text.prefix(400))")
        }
    }
}

extension ConsoleTests {
    /// A guesser is slowed: past five refused sign-ins in a minute from one address every sign-in from
    /// it is 429 with Retry-After, the right token too; each refusal is logged and counted, never the token.
    @Test(arguments: TestStoreKind.available)
    func refusedSignInsAreThrottledAndCounted(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let form: HTTPFields = [.contentType: "application/x-www-form-urlencoded"]
            for attempt in 0..<5 {
                let wrong = "gat_" + String(repeating: "B", count: 42) + "\(attempt)"
                #expect(try await server.send(.post, "/console/sign-in", headers: form, body: "token=\(wrong)").status == .unauthorized)
            }
            let throttled = try await server.send(.post, "/console/sign-in", headers: form, body: "token=\(server.adminToken)")
            #expect(throttled.status == .tooManyRequests && Int(throttled.headers[.retryAfter] ?? "") ?? 0 >= 1, "\(throttled.status)")
            #expect(throttled.headers[.setCookie] == nil)
            let metrics = String(buffer: try await server.client.execute(uri: "/metrics", method: .get).body)
            let counted = metrics.split(separator: "\n").filter { $0.hasPrefix("gatehouse_console_sign_in_failures_total") }
            #expect(counted.contains { $0.contains(#"reason="unknown_token""#) && $0.hasSuffix(" 5") }, "\(counted)")
            #expect(counted.contains { $0.contains(#"reason="throttled""#) && $0.hasSuffix(" 1") }, "\(counted)")
        }
    }

    /// One token guessed from many addresses is slowed by its first characters, in Core's throttle.
    @Test func aTokenGuessedFromManyAddressesIsThrottledByItsPrefix() async {
        let throttle = SignInThrottle()
        let now = Date()
        let guess = "gat_" + String(repeating: "C", count: 43)
        for octet in 1...5 { await throttle.failed(address: "198.51.100.\(octet)", token: guess, at: now) }
        #expect(await throttle.retryAfter(address: "198.51.100.99", token: guess, at: now) != nil)
        #expect(await throttle.retryAfter(address: "198.51.100.99", token: "gat_" + String(repeating: "D", count: 43), at: now) == nil)
        #expect(await throttle.retryAfter(address: "198.51.100.99", token: guess, at: now.addingTimeInterval(61)) == nil)
    }
}
