import Foundation
import GatehouseAPI
import GatehouseClient
import GatehouseTestSupport
import HTTPTypes
import Testing

/// The operator's path end to end over loopback HTTP, through the generated client.
@Suite struct AdminAPITests {
    @Test(arguments: TestStoreKind.available)
    func anOperatorCreatesAnAppRegistersEventsAndRotatesKeys(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let admin = GatehouseAdminClient(serverURL: server.baseURL, adminToken: server.adminToken)
            let created = try await admin.createApp(name: "Shop", platforms: [.ios, .android])
            #expect(created.app.appKey.count == 5)
            #expect(created.app.platforms == [.android, .ios])
            #expect(created.app.status == .active)
            #expect(created.secretKey.count == 32)
            #expect(created.serverSecret.hasPrefix("gsk_"))
            let appKey = created.app.appKey

            let event = try await admin.registerEvent(appKey, eventID: 3301, name: "login")
            #expect(event.eventId == 3301 && event.name == "login")
            _ = try await admin.registerEvent(appKey, eventID: 3400, name: "pay")
            #expect(try await admin.events(appKey).map(\.eventId) == [3301, 3400])

            let details = try await admin.app(appKey)
            #expect(details.app == created.app)
            #expect(details.secrets.map(\.version) == [1, 1])
            #expect(details.events.count == 2)
            #expect(try await admin.listApps().items.map(\.appKey) == [appKey])

            // The backend's credential verifies; after a rotation with overlap, old and new both do.
            let oldBackend = GatehouseBackendClient(serverURL: server.baseURL, appKey: appKey, serverSecret: created.serverSecret)
            #expect(try await oldBackend.whoami().secretVersion == 1)
            let rotated = try await admin.rotateSecret(appKey, kind: .server, overlapSeconds: 600)
            #expect(rotated.version == 2)
            #expect(rotated.previousRetiresAt != nil)
            let newBackend = GatehouseBackendClient(serverURL: server.baseURL, appKey: appKey, serverSecret: rotated.secret)
            #expect(try await oldBackend.whoami().secretVersion == 1)
            #expect(try await newBackend.whoami().secretVersion == 2)

            // A rotation without overlap retires the replaced version at once.
            let third = try await admin.rotateSecret(appKey, kind: .server, overlapSeconds: 0)
            await #expect(throws: GatehouseClientError.self) { try await newBackend.whoami() }
            await #expect(throws: GatehouseClientError.self) { try await oldBackend.whoami() }
            let thirdBackend = GatehouseBackendClient(serverURL: server.baseURL, appKey: appKey, serverSecret: third.secret)
            #expect(try await thirdBackend.whoami().secretVersion == 3)

            // Disabled apps stop verifying and are frozen; enabling restores them.
            #expect(try await admin.disableApp(appKey).status == .disabled)
            do {
                _ = try await thirdBackend.whoami()
                Issue.record("a disabled app's credential verified")
            } catch GatehouseClientError.problem(let problem) {
                #expect(problem.status == 403 && problem.code == "app_disabled")
            }
            do {
                _ = try await admin.registerEvent(appKey, eventID: 3302, name: "later")
                Issue.record("a disabled app accepted an event")
            } catch GatehouseClientError.problem(let problem) {
                #expect(problem.status == 409 && problem.code == "app_disabled")
            }
            #expect(try await admin.enableApp(appKey).status == .active)
            #expect(try await thirdBackend.whoami().app.appKey == appKey)

            // Every change is audited, newest first, with who and what, and never a secret.
            let audit = try await admin.auditEntries(appKey: appKey)
            #expect(
                audit.items.map(\.action) == [
                    "app.enable", "app.disable", "secret.rotate", "secret.rotate", "event.register", "event.register", "app.create",
                ]
            )
            #expect(audit.items.allSatisfy { $0.actor == "admin-token:test" && $0.requestId != nil && $0.sourceAddress == "127.0.0.1" })
            let auditText = String(decoding: try JSONEncoder().encode(audit), as: UTF8.self)
            for secret in [created.secretKey, created.serverSecret, rotated.secret, third.secret] {
                #expect(!auditText.contains(secret))
            }
            // Filters narrow it, each as the log names things.
            #expect(try await admin.auditEntries(appKey: appKey, action: "secret.rotate").items.count == 2)
            #expect(try await admin.auditEntries(actor: "admin-token:test").items.count == audit.items.count)
            #expect(try await admin.auditEntries(actor: "admin-token:nobody").items.isEmpty)
            // The harness made the admin token at the command line: the CLI's entries are that, none of this app's.
            let byTheCLI = try await admin.auditEntries(actor: "cli:test").items
            #expect(!byTheCLI.isEmpty && byTheCLI.allSatisfy { $0.actor == "cli:test" && $0.action == "admin_token.create" })
            #expect(try await admin.auditEntries(actor: "cli:nobody").items.isEmpty)
            let hourAgo = Date().addingTimeInterval(-3600)
            let inAnHour = Date().addingTimeInterval(3600)
            #expect(try await admin.auditEntries(appKey: appKey, from: hourAgo, to: inAnHour).items.count == audit.items.count)
            #expect(try await admin.auditEntries(appKey: appKey, from: inAnHour).items.isEmpty)
            #expect(try await admin.auditEntries(appKey: appKey, to: hourAgo).items.isEmpty)
            let firstPage = try await admin.auditEntries(limit: 3)
            let secondPage = try await admin.auditEntries(before: firstPage.nextBefore, limit: 3)
            #expect(firstPage.items.count == 3 && secondPage.items.count == 3)
            #expect(firstPage.items.last!.sequence > secondPage.items.first!.sequence)
        }
    }

    @Test(arguments: TestStoreKind.available)
    func adminTokenRefusalsSayWhy(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let cases: [(String?, String)] = [
                (nil, "admin_token_missing"),
                ("Basic dXNlcjpwYXNz", "admin_token_malformed"),
                ("Bearer gat_tooShort", "admin_token_malformed"),
                ("Bearer gat_" + String(repeating: "A", count: 43), "admin_token_unknown"),
            ]
            for (authorization, code) in cases {
                var headers: HTTPFields = [:]
                if let authorization { headers[.authorization] = authorization }
                let response = try await server.send(.get, "/v1/admin/apps", headers: headers)
                #expect(response.status == .unauthorized)
                #expect(response.problem?.code == code)
                #expect(response.headers[.wwwAuthenticate] == #"Bearer realm="gatehouse-admin""#)
                #expect(response.headers[.contentType] == "application/problem+json")
            }
        }
    }

    @Test(arguments: TestStoreKind.available)
    func healthMetricsAndRequestIDs(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let live = try await server.send(.get, "/health/live", headers: [:])
            #expect(live.status == .ok && live.read(Components.Schemas.Liveness.self)?.status == .ok)
            // Readiness gives the database a second (`HealthController.readinessWait`) and says 503 past
            // it, which the whole suite's load on one PostgreSQL can cause; a probe asks again, as here.
            var ready = try await server.send(.get, "/health/ready", headers: [HTTPField.Name("X-Request-Id")!: "trace-123"])
            for _ in 0..<10 where ready.status == .serviceUnavailable {
                try await Task.sleep(for: .milliseconds(500))
                ready = try await server.send(.get, "/health/ready", headers: [HTTPField.Name("X-Request-Id")!: "trace-123"])
            }
            #expect(ready.status == .ok)
            let readiness = try ready.decoded(Components.Schemas.Readiness.self)
            #expect(readiness.database.rawValue == kind.rawValue && readiness.schemaVersion >= 2)
            #expect(ready.headers[HTTPField.Name("X-Request-Id")!] == "trace-123")

            let metrics = try await server.client.execute(uri: "/metrics", method: .get)
            let text = String(buffer: metrics.body)
            #expect(text.contains(#"gatehouse_http_requests_total{route="/health/ready",method="GET",status="200"} 1"#))
            #expect(text.contains("gatehouse_http_request_duration_seconds_bucket"))
            #expect(text.contains("gatehouse_db_pool_capacity"))
            // The group commits' pool is PostgreSQL's alone; on SQLite they share the one connection.
            #expect(text.contains("gatehouse_db_batch_pool_capacity 4") == (kind == .postgres), "\(text)")
        }
    }
}
