import Foundation
import GatehouseAPI
import GatehouseClient
import GatehouseCore
import GatehouseTestSupport
import HTTPTypes
import Testing

/// The device-risk SDK's flow (seed 002) end to end over loopback HTTP, on both stores.
@Suite struct DeviceRiskFlowTests {
    struct AppCredentials {
        let appKey: String
        let secretKey: String
        let serverSecret: String
        var backend: HTTPFields {
            [.authorization: "Basic " + Data("\(appKey):\(serverSecret)".utf8).base64EncodedString(), .contentType: "application/json"]
        }
    }

    /// An app's creation answered with something other than 201: its status and body, where a decoding
    /// error would name only a missing key.
    struct AppNotCreated: Error, CustomStringConvertible {
        let status: HTTPResponse.Status
        let body: String
        var description: String { "creating an app answered \(status.code): \(body)" }
    }

    static func createApp(_ server: ServerFixture, events: [Int] = [3301]) async throws -> AppCredentials {
        let response = try await server.send(.post, "/v1/admin/apps", body: #"{"name":"Shop","platforms":["ios"]}"#)
        guard response.status == .created else { throw AppNotCreated(status: response.status, body: String(decoding: response.body, as: UTF8.self)) }
        let created = try response.decoded(Components.Schemas.AppCreated.self)
        for event in events {
            let registered = try await server.send(
                .post,
                "/v1/admin/apps/\(created.app.appKey)/events",
                body: #"{"eventId":\#(event),"name":"e\#(event)"}"#
            )
            #expect(registered.status == .created)
        }
        return AppCredentials(appKey: created.app.appKey, secretKey: created.secretKey, serverSecret: created.serverSecret)
    }

    /// Signs a `/v1/sdk` request the way docs/sdk-protocol.md says, with knobs to break it.
    static func sdk(
        _ server: ServerFixture,
        _ app: AppCredentials,
        _ path: String,
        _ body: String,
        secretKey: String? = nil,
        timestamp: Int = Int(Date().timeIntervalSince1970),
        nonce: String = "n-" + UUID().uuidString,
        appKeyHeader: String?? = .none
    ) async throws -> TestResponse {
        let canonical = SDKSignedRequest.canonical(method: "POST", path: path, timestamp: timestamp, nonce: nonce, body: Array(body.utf8))
        var headers: HTTPFields = [
            .contentType: "application/json",
            HTTPField.Name("X-Gatehouse-Timestamp")!: String(timestamp),
            HTTPField.Name("X-Gatehouse-Nonce")!: nonce,
            HTTPField.Name("X-Gatehouse-Signature")!: SDKSignedRequest.sign(canonical: canonical, secretKey: secretKey ?? app.secretKey),
        ]
        switch appKeyHeader {
        case .none: headers[HTTPField.Name("X-Gatehouse-AppKey")!] = app.appKey
        case .some(.some(let value)): headers[HTTPField.Name("X-Gatehouse-AppKey")!] = value
        case .some(.none): break
        }
        return try await server.send(.post, path, headers: headers, body: body)
    }

    static func startDevice(
        _ server: ServerFixture,
        _ app: AppCredentials,
        collectType: Int = 0,
        clientID: String = "device-1",
        signals: String = "{}"
    )
        async throws -> String
    {
        let body = """
            {"deviceId":"\(clientID)","collectType":\(collectType),"platform":"ios","basic":{"model":"iPhone15,2","osVersion":"17.1","screen":"1179x2556"},
             "unique":{"idfv":"IDFV-\(clientID)","idfa":"IDFA"},"extra":{"wifiSsid":"home","wifiBssid":"aa:bb:cc"},"environment":\(signals)}
            """
        let started = try await sdk(server, app, "/v1/sdk/device/start", body)
        #expect(started.status == .ok)
        return try started.decoded(Components.Schemas.DeviceStartResponse.self).deviceId
    }

    static func ztoken(
        _ server: ServerFixture,
        _ app: AppCredentials,
        device: String,
        event: Int = 3301,
        account: String = "10538532"
    ) async throws
        -> String
    {
        let issued = try await sdk(server, app, "/v1/sdk/ztoken", #"{"deviceId":"\#(device)","eventId":\#(event),"accountId":"\#(account)"}"#)
        #expect(issued.status == .ok)
        return try issued.decoded(Components.Schemas.ZTokenResponse.self).z
    }

    static func query(
        _ server: ServerFixture,
        _ app: AppCredentials,
        _ token: String,
        event: Int = 3301,
        account: String = "10538532"
    )
        async throws -> Components.Schemas.RiskDecisionView
    {
        let response = try await server.send(
            .post,
            "/v1/risk/query",
            headers: app.backend,
            body: #"{"ztoken":"\#(token)","eventId":\#(event),"accountId":"\#(account)","clientIp":"127.0.0.1","userAgent":"shop/1.0"}"#
        )
        #expect(response.status == .ok, "\(response.json ?? [:])")
        return try response.decoded()
    }

    static func tags(_ decision: Components.Schemas.RiskDecisionView) -> [String] {
        decision.tags.map(\.tag)
    }

    static func ztokenLookups(_ server: ServerFixture) async throws -> Double {
        try await metric(server, "gatehouse_store_ztoken_lookups")
    }

    static func metric(_ server: ServerFixture, _ name: String) async throws -> Double {
        let text = String(buffer: try await server.client.execute(uri: "/metrics", method: .get).body)
        let line = text.split(separator: "\n").first { $0.hasPrefix(name + " ") }
        return Double(line?.split(separator: " ").last ?? "") ?? -1
    }

    @Test(arguments: TestStoreKind.available)
    func theSeedFlowWorksEndToEnd(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Self.createApp(server)

            // Every collection mode stores only the groups it allows and says which it dropped.
            for mode in 0...7 {
                let body = """
                    {"deviceId":"mode-\(mode)","collectType":\(mode),"basic":{"model":"m"},"unique":{"idfv":"v-\(mode)"},"extra":{"wifiSsid":"s"}}
                    """
                let started = try await Self.sdk(server, app, "/v1/sdk/device/start", body).decoded(Components.Schemas.DeviceStartResponse.self)
                #expect(started.code == ._0 && started.ztokenTtlSeconds == 300)
                let expected = Set([(1, "basic"), (2, "unique"), (4, "extra")].filter { mode & $0.0 != 0 }.map(\.1))
                #expect(Set(started.dropped.map(\.rawValue)) == expected, "mode \(mode)")
                let stored = try await server.send(.get, "/v1/admin/apps/\(app.appKey)/devices/\(started.deviceId)")
                    .decoded(Components.Schemas.DeviceRecord.self)
                #expect((stored.basic != nil) == (mode & 1 == 0), "mode \(mode)")
                #expect((stored.unique != nil) == (mode & 2 == 0), "mode \(mode)")
                #expect((stored.extra != nil) == (mode & 4 == 0), "mode \(mode)")
            }

            // The same device re-initialising keeps its identity.
            let device = try await Self.startDevice(server, app)
            #expect(try await Self.startDevice(server, app) == device)

            // A ztoken passes once, then reports replayed.
            let token = try await Self.ztoken(server, app, device: device)
            #expect(token.count < 100)
            let first = try await Self.query(server, app, token)
            #expect(first.tokenState == .fresh && first.decision == .pass && first.score == 0)
            #expect(first.device?.deviceId == device)
            let again = try await Self.query(server, app, token)
            #expect(again.tokenState == .replayed && again.decision == .reject && Self.tags(again).contains("token.replayed"))

            // A forged token is refused without touching the ztoken table.
            let lookupsBefore = try await Self.ztokenLookups(server)
            var forged = Array(token)
            forged[30] = forged[30] == "A" ? "B" : "A"
            let refused = try await Self.query(server, app, String(forged))
            #expect(refused.tokenState == .forged && refused.decision == .reject)
            #expect(try await Self.ztokenLookups(server) == lookupsBefore)

            // The stored decision reads back for the backend and in the admin listing.
            let stored = try await server.send(.get, "/v1/risk/decisions/\(first.decisionId)", headers: app.backend)
                .decoded(Components.Schemas.RiskDecisionView.self)
            #expect(stored.tokenState == .fresh && stored.userAgent == "shop/1.0")
            let listed = try await server.send(.get, "/v1/admin/risk/decisions?appKey=\(app.appKey)&decision=reject")
                .decoded(Components.Schemas.RiskDecisionPage.self)
            #expect(listed.items.count == 2)
            // The forged token's decision was written behind its answer (the listing waited for it); on
            // PostgreSQL the replay's too, found at its batch's write (SQLite's batch is a transaction).
            #expect(try await Self.metric(server, "gatehouse_store_decisions_written_behind") == (kind == .postgres ? 2 : 1))
            #expect(try await Self.metric(server, "gatehouse_store_decisions_lost") == 0)
            #expect(try await Self.metric(server, "gatehouse_store_decisions_pending") == 0)
        }
    }

    @Test(arguments: TestStoreKind.available)
    func velocityDeviceSignalsDenyListsAndTheBridgeShowUpInDecisions(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Self.createApp(server)
            let rules = try await server.send(.put, "/v1/admin/apps/\(app.appKey)/risk/rules", body: #"{"maxDeviceEventsPerMinute":3}"#)
            #expect(try rules.decoded(Components.Schemas.RiskRulesView.self).effective.maxDeviceEventsPerMinute == 3)
            // JSON Schema's integer 3301.0 names event 3301; a real fraction is a bad parameter.
            let zeroFraction = try await server.send(.put, "/v1/admin/apps/\(app.appKey)/events/3301.0/risk/rules", body: "{}")
            #expect(zeroFraction.status == .ok)
            let fraction = try await server.send(.put, "/v1/admin/apps/\(app.appKey)/events/3301.5/risk/rules", body: "{}")
            #expect(fraction.status == .badRequest && fraction.problem?.field == "eventId")

            let device = try await Self.startDevice(server, app, signals: #"{"jailbreak":true}"#)
            // Velocity counts what the server sees: the tokens risk queries consumed.
            for _ in 0..<3 { _ = try await Self.query(server, app, try await Self.ztoken(server, app, device: device)) }
            let busy = try await Self.query(server, app, try await Self.ztoken(server, app, device: device))
            #expect(Self.tags(busy) == ["device.jailbreak", "velocity.device_events_per_minute"])
            #expect(busy.decision == .reject && busy.score == 80)

            let listed = try await server.send(
                .post,
                "/v1/admin/apps/\(app.appKey)/risk/lists",
                body: #"{"list":"deny","type":"account","value":"mallory"}"#
            )
            #expect(listed.status == .created)
            let clean = try await Self.startDevice(server, app, clientID: "clean")
            let denied = try await Self.query(server, app, try await Self.ztoken(server, app, device: clean, account: "mallory"), account: "mallory")
            #expect(Self.tags(denied).contains("list.deny") && denied.decision == .reject)

            let bridged = try await Self.sdk(
                server,
                app,
                "/v1/sdk/ztoken/bridge",
                #"{"deviceId":"\#(clean)","js":"{\"eventId\":\"3301\",\"page\":\"cart\"}","url":"https://shop.example/cart","c":"cuid-1","a":"alice"}"#
            )
            let bridgedToken = try bridged.decoded(Components.Schemas.ZTokenResponse.self).z
            let fromPage = try await Self.query(server, app, bridgedToken, account: "alice")
            #expect(fromPage.tokenState == .fresh && fromPage.pageUrl == "https://shop.example/cart")
        }
    }

    @Test(arguments: TestStoreKind.available)
    func sdkRefusalsCarryTheSDKCodesAndWriteNothing(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Self.createApp(server)
            let device = try await Self.startDevice(server, app)
            let ztoken = "/v1/sdk/ztoken"
            let good = #"{"deviceId":"\#(device)","eventId":3301,"accountId":"u1"}"#
            // A replay is the same signed request again: the nonce with its timestamp (OAuth 1.0's rule,
            // RFC 5849 3.3: a nonce is unique among the requests with its timestamp).
            let reused = "nonce-used-once-0001"
            let signedAt = Int(Date().timeIntervalSince1970)
            _ = try await Self.sdk(server, app, ztoken, good, timestamp: signedAt, nonce: reused)
            let cases: [(String, TestResponse, Int, String)] = [
                ("no appKey", try await Self.sdk(server, app, ztoken, good, appKeyHeader: .some(nil)), -9, "appkey_empty"),
                ("unknown appKey", try await Self.sdk(server, app, ztoken, good, appKeyHeader: "zzzzz"), -12, "appkey_invalid"),
                (
                    "bad signature", try await Self.sdk(server, app, ztoken, good, secretKey: String(repeating: "x", count: 32)), -11,
                    "signature_mismatch"
                ),
                (
                    "stale timestamp", try await Self.sdk(server, app, ztoken, good, timestamp: Int(Date().timeIntervalSince1970) - 301), -11,
                    "timestamp_outside_window"
                ),
                ("reused nonce", try await Self.sdk(server, app, ztoken, good, timestamp: signedAt, nonce: reused), -11, "nonce_reused"),
                (
                    "unregistered event", try await Self.sdk(server, app, ztoken, #"{"deviceId":"\#(device)","eventId":3350,"accountId":"u1"}"#), -10,
                    "event_not_registered"
                ),
                (
                    "event 3299", try await Self.sdk(server, app, ztoken, #"{"deviceId":"\#(device)","eventId":3299,"accountId":"u1"}"#), -10,
                    "invalid_event_id"
                ),
                ("missing account", try await Self.sdk(server, app, ztoken, #"{"deviceId":"\#(device)","eventId":3301}"#), -10, "invalid_body"),
                (
                    "unstarted device",
                    try await Self.sdk(server, app, ztoken, #"{"deviceId":"AAAAAAAAAAAAAAAAAAAAAA","eventId":3301,"accountId":"u1"}"#), -10,
                    "invalid_device_id"
                ),
                (
                    "oversize device data",
                    try await Self.sdk(
                        server,
                        app,
                        "/v1/sdk/device/start",
                        #"{"deviceId":"x","collectType":0,"basic":{"model":"\#(String(repeating: "m", count: 5000))"}}"#
                    ), -10, "body_too_large"
                ),
                (
                    "long device field",
                    try await Self.sdk(
                        server,
                        app,
                        "/v1/sdk/device/start",
                        #"{"deviceId":"x","collectType":0,"basic":{"model":"\#(String(repeating: "m", count: 300))"}}"#
                    ), -10, "invalid_device_data"
                ),
                (
                    "collect type 8", try await Self.sdk(server, app, "/v1/sdk/device/start", #"{"deviceId":"x","collectType":8}"#), -10,
                    "invalid_collect_type"
                ),
                (
                    "bridge without event",
                    try await Self.sdk(
                        server,
                        app,
                        "/v1/sdk/ztoken/bridge",
                        #"{"deviceId":"\#(device)","js":"{}","url":"https://a.example","c":"c","a":"a"}"#
                    ), -10, "invalid_bridge_parameters"
                ),
            ]
            for (name, response, code, reason) in cases {
                let refusal = try response.decoded(Components.Schemas.SDKError.self)
                #expect(refusal.code.rawValue == code && refusal.reason == reason, "\(name): \(refusal)")
                #expect((400..<500).contains(Int(response.status.code)), "\(name)")
            }
            #expect(try await server.send(.get, "/v1/admin/apps/\(app.appKey)/devices/x").status == .badRequest)

            _ = try await server.send(.post, "/v1/admin/apps/\(app.appKey)/disable")
            let disabled = try await Self.sdk(server, app, ztoken, good)
            let refusal = try disabled.decoded(Components.Schemas.SDKError.self)
            #expect(refusal.code == ._n12 && refusal.reason == "app_disabled")
        }
    }

    @Test(arguments: TestStoreKind.available)
    func badTokensAndBadQueriesAreRefusedClearly(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Self.createApp(server)
            let other = try await Self.createApp(server)
            let device = try await Self.startDevice(server, app)
            let token = try await Self.ztoken(server, app, device: device)
            let foreignDevice = try await Self.startDevice(server, other)
            let foreign = try await Self.ztoken(server, other, device: foreignDevice)
            let states: [(String, String)] = [
                (String(repeating: "A", count: 200), "forged"), ("%%%not-base64%%%", "forged"), (String(token.dropLast(10)), "forged"),
                (foreign, "wrongApp"),
            ]
            for (candidate, state) in states {
                let decision = try await Self.query(server, app, candidate)
                #expect(decision.tokenState.rawValue == state && decision.decision == .reject)
            }
            #expect(try await Self.query(server, app, token, event: 3300).tokenState == .wrongEvent)
            #expect(try await Self.query(server, app, token, account: "someone-else").tokenState == .wrongAccount)
            // None of those consumed the real token; the Swift client sees it fresh, then reads it back.
            let backend = GatehouseBackendClient(serverURL: server.baseURL, appKey: app.appKey, serverSecret: app.serverSecret)
            let fresh = try await backend.queryRisk(ztoken: token, eventID: 3301, accountID: "10538532", clientIP: "2001:db8::1")
            #expect(fresh.tokenState == .fresh && fresh.tags.map(\.tag) == ["network.ip_changed"])
            #expect(try await backend.decision(fresh.decisionId).decisionId == fresh.decisionId)

            let bad: [(String, Int, String)] = [
                (#"{"ztoken":"x","eventId":3301,"accountId":"u","clientIp":"not-an-ip"}"#, 400, "invalid_ip_address"),
                (#"{"ztoken":"x","eventId":3401,"accountId":"u","clientIp":"1.2.3.4"}"#, 400, "invalid_event_id"),
                (#"{"ztoken":"x","eventId":3301,"clientIp":"1.2.3.4"}"#, 400, "invalid_body"),
                (#"{"ztoken":"x","eventId":3301,"accountId":"u","clientIp":"1.2.3.4","extra":1}"#, 400, "unknown_field"),
            ]
            for (body, status, code) in bad {
                let response = try await server.send(.post, "/v1/risk/query", headers: app.backend, body: body)
                #expect(Int(response.status.code) == status && response.problem?.code == code, "\(body)")
            }
            let unauthenticated = try await server.send(.post, "/v1/risk/query", headers: [.contentType: "application/json"], body: "{}")
            #expect(unauthenticated.status == .unauthorized)
            let missing = try await server.send(.get, "/v1/risk/decisions/\(UUID().uuidString)", headers: app.backend)
            #expect(missing.status == .notFound && missing.problem?.code == "decision_not_found")
        }
    }
}
