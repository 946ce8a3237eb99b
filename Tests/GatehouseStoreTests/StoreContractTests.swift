import Foundation
import GatehouseCore
import GatehouseTestSupport
import Testing

@testable import GatehouseStore

/// One contract, run against both stores: what the service relies on from persistence.
@Suite struct StoreContractTests {
    let box = try! SecretBox(masterKey: Array(repeating: 3, count: 32))
    let origin = ChangeOrigin(actor: Actor(kind: .cli, name: "test"), requestID: "req-1", sourceAddress: "127.0.0.1")
    let now = Date(millisecondsSince1970: 1_800_000_000_123)

    func newApp(named name: String = "Shop") throws -> (App, [SecretKind: IssuedSecret], AuditEntry) {
        var generator = SystemRandomNumberGenerator()
        let app = try AppDraft(name: name, platforms: ["ios", "android"]).makeApp(at: now, using: &generator)
        let secrets = issueInitialSecrets(for: app, at: now, box: box, using: &generator)
        let audit = origin.entry(
            at: now,
            action: "app.create",
            targetType: "app",
            targetID: app.appKey.rawValue,
            appID: app.id,
            before: nil,
            after: app.auditSnapshot
        )
        return (app, secrets, audit)
    }

    func auditCount(_ store: SQLStore) async throws -> Int {
        try await store.admin.auditRecords(matching: AuditFilter(), before: nil, limit: 1000).count
    }

    @Test(arguments: TestStoreKind.available)
    func migrationsApplyOnceAndAreRecorded(kind: TestStoreKind) async throws {
        try await withTestDatabase(kind) { (database) async throws in
            try await StoreService.withStore(database.location, logger: TestDatabase.logger) { (store) async throws in
                let shipped = try Migration.bundled(for: store.dialect).map(\.version)
                #expect(shipped.count >= 2)
                #expect(try await store.schemaStatus() == SchemaStatus(applied: [], pending: shipped))
                #expect(try await store.migrate() == shipped)
                #expect(try await store.migrate() == [])
                #expect(try await store.schemaStatus() == SchemaStatus(applied: shipped, pending: []))
            }
        }
    }

    @Test(arguments: TestStoreKind.available)
    func concurrentMigrationsFromSeparateConnectionsApplyEachMigrationOnce(kind: TestStoreKind) async throws {
        try await withTestDatabase(kind) { (database) async throws in
            let applied = try await withThrowingTaskGroup(of: [Int].self) { group in
                for _ in 0..<4 {
                    group.addTask {
                        try await StoreService.withStore(database.location, logger: TestDatabase.logger) { try await $0.migrate() }
                    }
                }
                return try await group.reduce(into: [Int]()) { $0 += $1 }
            }
            let shipped = try Migration.bundled(for: kind == .postgres ? .postgres : .sqlite).map(\.version)
            #expect(applied.sorted() == shipped)
            try await StoreService.withStore(database.location, logger: TestDatabase.logger) { (store) async throws in
                #expect(try await store.schemaStatus() == SchemaStatus(applied: shipped, pending: []))
            }
        }
    }

    @Test(arguments: TestStoreKind.available)
    func appsRoundTripWithTheirSecretsAndAudit(kind: TestStoreKind) async throws {
        let (app, secrets, audit) = try newApp()
        try await withMigratedStore(kind) { (store, _) async throws in
            try await store.apps.createApp(app, secrets: secrets.values.map(\.stored), audit: audit)
            #expect(try await store.apps.app(withKey: app.appKey) == app)
            let stored = try await store.apps.secrets(of: app.id)
            #expect(Set(stored.map(\.kind)) == [.sdk, .server])
            for secret in stored {
                // The SDK's secret key reads back; the server secret is kept as its hash only.
                switch secret.kind {
                case .sdk: #expect(try secret.open(with: box) == secrets[.sdk]!.plaintext)
                case .server: #expect(secret.sealed.isEmpty && secret.verifier == CredentialDigest.of(secrets[.server]!.plaintext))
                }
            }
            let records = try await store.admin.auditRecords(matching: AuditFilter(appID: app.id), before: nil, limit: 10)
            #expect(records.map(\.entry) == [audit])
        }
    }

    @Test(arguments: TestStoreKind.available)
    func aTakenAppKeyWritesNothing(kind: TestStoreKind) async throws {
        let (app, secrets, audit) = try newApp()
        try await withMigratedStore(kind) { (store, _) async throws in
            try await store.apps.createApp(app, secrets: secrets.values.map(\.stored), audit: audit)
            let clash = App(
                id: .random(),
                appKey: app.appKey,
                name: "Other",
                platforms: [.web],
                status: .active,
                createdAt: now,
                updatedAt: now
            )
            await #expect(throws: StoreError.self) {
                try await store.apps.createApp(clash, secrets: [], audit: audit)
            }
            #expect(try await auditCount(store) == 1)
            #expect(try await store.apps.app(withKey: app.appKey)?.name == "Shop")
        }
    }

    @Test(arguments: TestStoreKind.available)
    func aDuplicateEventIsAConflictAndWritesNoAudit(kind: TestStoreKind) async throws {
        let (app, secrets, audit) = try newApp()
        try await withMigratedStore(kind) { (store, _) async throws in
            try await store.apps.createApp(app, secrets: secrets.values.map(\.stored), audit: audit)
            let event = try RegisteredEvent.draft(app: app, eventID: 3301, name: "login", at: now)
            let eventAudit = origin.entry(
                at: now,
                action: "event.register",
                targetType: "event",
                targetID: "x",
                appID: app.id,
                before: nil,
                after: event.auditSnapshot
            )
            try await store.apps.registerEvent(event, audit: eventAudit)
            do {
                try await store.apps.registerEvent(event, audit: eventAudit)
                Issue.record("a duplicate event was accepted")
            } catch let error as StoreError {
                guard case .conflict = error else { throw error }
            }
            #expect(try await store.apps.events(of: app.id) == [event])
            #expect(try await auditCount(store) == 2)
        }
    }

    @Test(arguments: TestStoreKind.available)
    func rotationStoresTheNewVersionAndRetiresTheOld(kind: TestStoreKind) async throws {
        let (app, secrets, audit) = try newApp()
        try await withMigratedStore(kind) { (store, _) async throws in
            try await store.apps.createApp(app, secrets: secrets.values.map(\.stored), audit: audit)
            var generator = SystemRandomNumberGenerator()
            let rotation = try SecretRotation.plan(
                app: app,
                kind: .sdk,
                existing: try await store.apps.secrets(of: app.id),
                overlapSeconds: 60,
                at: now,
                box: box,
                using: &generator
            )
            try await store.apps.rotateSecret(rotation.issued.stored, retirements: rotation.retirements, audit: audit)
            let sdk = try await store.apps.secrets(of: app.id).filter { $0.kind == .sdk }
            #expect(sdk.map(\.version) == [1, 2])
            #expect(sdk[0].retiresAt == now.addingTimeInterval(60))
            #expect(sdk[1].retiresAt == nil)
            // A concurrent rotation that drew the same version number loses, writing nothing.
            await #expect(throws: StoreError.self) {
                try await store.apps.rotateSecret(rotation.issued.stored, retirements: [:], audit: audit)
            }
            #expect(try await auditCount(store) == 2)
        }
    }

    @Test(arguments: TestStoreKind.available)
    func statusChangesAreConditional(kind: TestStoreKind) async throws {
        let (app, secrets, audit) = try newApp()
        try await withMigratedStore(kind) { (store, _) async throws in
            try await store.apps.createApp(app, secrets: secrets.values.map(\.stored), audit: audit)
            var disabled = app
            disabled.status = .disabled
            try await store.apps.changeStatus(of: app, from: .active, to: disabled, audit: audit)
            #expect(try await store.apps.app(withKey: app.appKey)?.status == .disabled)
            await #expect(throws: StoreError.conflict("app \(app.appKey) changed concurrently")) {
                try await store.apps.changeStatus(of: app, from: .active, to: disabled, audit: audit)
            }
            #expect(try await auditCount(store) == 2)
        }
    }

    @Test(arguments: TestStoreKind.available)
    func appsListInKeyOrderAPageAtATime(kind: TestStoreKind) async throws {
        try await withMigratedStore(kind) { (store, _) async throws in
            var keys: [AppKey] = []
            for index in 0..<5 {
                let (app, secrets, audit) = try newApp(named: "App \(index)")
                try await store.apps.createApp(app, secrets: secrets.values.map(\.stored), audit: audit)
                keys.append(app.appKey)
            }
            keys.sort()
            let first = try await store.apps.listApps(after: nil, limit: 3)
            let rest = try await store.apps.listApps(after: first.last?.appKey, limit: 3)
            #expect((first + rest).map(\.appKey) == keys)
        }
    }

    @Test(arguments: TestStoreKind.available)
    func adminTokensAreFoundByHashAndRevoked(kind: TestStoreKind) async throws {
        try await withMigratedStore(kind) { (store, _) async throws in
            var generator = SystemRandomNumberGenerator()
            let (plaintext, token) = try AdminToken.issue(name: "ops", at: now, using: &generator)
            let audit = origin.entry(
                at: now,
                action: "admin_token.create",
                targetType: "admin_token",
                targetID: "ops",
                appID: nil,
                before: nil,
                after: nil
            )
            #expect(try await store.admin.hasAdminTokens() == false)
            try await store.admin.createAdminToken(token, audit: audit)
            #expect(try await store.admin.adminToken(withHash: CredentialDigest.of(plaintext)) == token)
            await #expect(throws: StoreError.self) { try await store.admin.createAdminToken(token, audit: audit) }
            try await store.admin.revokeAdminToken(named: "ops", at: now, audit: audit)
            #expect(try await store.admin.adminToken(withHash: token.hash)?.revokedAt == now)
            await #expect(throws: StoreError.notFound("no live admin token named 'ops'")) {
                try await store.admin.revokeAdminToken(named: "ops", at: now, audit: audit)
            }
            #expect(try await auditCount(store) == 2)
        }
    }

    @Test(arguments: TestStoreKind.available)
    func theAuditLogRefusesUpdatesAndDeletes(kind: TestStoreKind) async throws {
        let (app, secrets, audit) = try newApp()
        try await withMigratedStore(kind) { (store, _) async throws in
            try await store.apps.createApp(app, secrets: secrets.values.map(\.stored), audit: audit)
            for statement in ["UPDATE audit_log SET actor = 'cli:mallory'", "DELETE FROM audit_log"] {
                await #expect(throws: StoreError.self) { try await store.execute(statement) }
            }
            let records = try await store.admin.auditRecords(matching: AuditFilter(), before: nil, limit: 10)
            #expect(records.map(\.entry.actor.name) == ["test"])
        }
    }

    @Test(arguments: TestStoreKind.available)
    func auditPagesNewestFirst(kind: TestStoreKind) async throws {
        try await withMigratedStore(kind) { (store, _) async throws in
            for index in 0..<5 {
                let (app, secrets, audit) = try newApp(named: "App \(index)")
                try await store.apps.createApp(app, secrets: secrets.values.map(\.stored), audit: audit)
            }
            let page = try await store.admin.auditRecords(matching: AuditFilter(), before: nil, limit: 3)
            let next = try await store.admin.auditRecords(matching: AuditFilter(), before: page.last?.sequence, limit: 3)
            let sequences = (page + next).map(\.sequence)
            #expect(sequences == sequences.sorted(by: >))
            #expect(Set(sequences).count == 5)
        }
    }

    /// Each filter alone and together, the time bounds half-open, against either SQL.
    @Test(arguments: TestStoreKind.available)
    func auditFiltersByAppActionActorAndTime(kind: TestStoreKind) async throws {
        try await withMigratedStore(kind) { (store, _) async throws in
            let actors = [Actor(kind: .adminToken, name: "ops"), Actor(kind: .cli, name: "root"), Actor(kind: .adminToken, name: "ops")]
            var apps: [App] = []
            for (index, actor) in actors.enumerated() {
                let (app, secrets, made) = try newApp(named: "App \(index)")
                let audit = ChangeOrigin(actor: actor, requestID: nil, sourceAddress: nil).entry(
                    at: now.addingTimeInterval(Double(index) * 3600),
                    action: index == 1 ? "app.import" : "app.create",
                    targetType: made.targetType,
                    targetID: made.targetID,
                    appID: app.id,
                    before: nil,
                    after: made.after
                )
                try await store.apps.createApp(app, secrets: secrets.values.map(\.stored), audit: audit)
                apps.append(app)
            }
            func names(_ filter: AuditFilter) async throws -> [String] {
                try await store.admin.auditRecords(matching: filter, before: nil, limit: 10).map(\.entry.targetID)
            }
            let keys = apps.map(\.appKey.rawValue)
            #expect(try await names(AuditFilter()) == keys.reversed())
            #expect(try await names(AuditFilter(appID: apps[1].id)) == [keys[1]])
            #expect(try await names(AuditFilter(action: "app.import")) == [keys[1]])
            #expect(try await names(AuditFilter(actor: actors[0])) == [keys[2], keys[0]])
            #expect(try await names(AuditFilter(actor: Actor(kind: .cli, name: "ops"))) == [])
            #expect(try await names(AuditFilter(from: now.addingTimeInterval(3600))) == [keys[2], keys[1]])
            #expect(try await names(AuditFilter(to: now.addingTimeInterval(3600))) == [keys[0]])
            #expect(try await names(AuditFilter(action: "app.create", actor: actors[0], from: now.addingTimeInterval(1))) == [keys[2]])
        }
    }

    @Test(arguments: TestStoreKind.available)
    func theMasterKeyCheckIsWrittenOnce(kind: TestStoreKind) async throws {
        try await withMigratedStore(kind) { (store, _) async throws in
            let first = box.makeKeyCheck()
            #expect(try await store.masterKeyCheck(orInsert: first) == first)
            #expect(try await store.masterKeyCheck(orInsert: box.makeKeyCheck()) == first)
        }
    }
}

@Suite struct MigrationFileTests {
    @Test func statementsSplitAtLineEndsButNotInsideDollarQuotes() {
        let sql = """
            -- comment
            CREATE TABLE a (x int);

            CREATE FUNCTION f() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                RAISE EXCEPTION 'no';
            END;
            $$;
            CREATE TRIGGER t BEFORE UPDATE ON a BEGIN SELECT RAISE(ABORT, 'x'); END;
            """
        let statements = Migration.splitStatements(sql)
        #expect(statements.count == 3)
        #expect(statements[1].hasPrefix("CREATE FUNCTION") && statements[1].hasSuffix("$$;"))
        #expect(statements[2].hasPrefix("CREATE TRIGGER"))
    }

    @Test func fileNamesCarryVersionNameAndDialect() {
        let migration = Migration.parse(fileName: "0007_risk_rules.postgres.sql", contents: "SELECT 1;", dialect: .postgres)
        #expect(migration == Migration(version: 7, name: "risk_rules", statements: ["SELECT 1;"]))
        #expect(Migration.parse(fileName: "0007_risk_rules.postgres.sql", contents: "", dialect: .sqlite) == nil)
        #expect(Migration.parse(fileName: "notes.txt", contents: "", dialect: .sqlite) == nil)
    }

    @Test func bothDialectsShipTheSameVersions() throws {
        #expect(try Migration.bundled(for: .postgres).map(\.version) == Migration.bundled(for: .sqlite).map(\.version))
    }
}
