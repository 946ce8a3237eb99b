import Foundation
import GatehouseCore
import GatehouseTestSupport
import Testing

@testable import GatehouseStore

/// Migration 0014 (time partitions) on a database that has been serving: a row in every table of the
/// schema before it, and after it the same rows, single use still holding on them, and (PostgreSQL)
/// the old rows in a range that retention drops whole.
@Suite struct MigrationForwardTests {
    static let before = 13

    @Test(arguments: TestStoreKind.available)
    func everyRowSurvivesThePartitioningAndSingleUseStillHolds(kind: TestStoreKind) async throws {
        try await withTestDatabase(kind) { testDatabase in
            try await StoreService.withStore(testDatabase.location, logger: TestDatabase.logger) { store in
                let database = store.database
                let shipped = try Migration.bundled(for: database.dialect)
                _ = try await Migrator(database: database, migrations: shipped.filter { $0.version <= Self.before }).migrate()
                let now = Date()
                for sql in Self.rows(at: now) { try await database.query(sql) }

                // A table added before 0014 and missing above would go untested: every table must have rows.
                let tables = try await Self.tables(in: database)
                var counts: [String: Int64] = [:]
                for table in tables { counts[table] = try await Self.count(table, in: database) }
                #expect(tables.count == 25 && counts.values.allSatisfy { $0 > 0 }, "\(counts)")

                #expect(try await store.migrate() == shipped.map(\.version).filter { $0 > Self.before })
                for table in tables { #expect(try await Self.count(table, in: database) == counts[table], "\(table)") }

                // Used once before the migration, still used after it.
                for sql in Self.singleUse(at: now) {
                    #expect(try await database.query(sql + " ON CONFLICT DO NOTHING RETURNING app_id").isEmpty, "\(sql.text)")
                }
                guard kind == .postgres else { return }
                // New ranges come after the old rows' range, and the old rows' range goes whole once past.
                #expect((try await store.retention.keepPartitions(at: now)?.created ?? 0) > 0)
                let oldRanges = try await database.query(
                    "SELECT relname FROM pg_class WHERE relname LIKE '%\\_before\\_%' AND relkind = 'r'"
                )
                #expect(oldRanges.count == PartitionedTable.all.count)
                let purged = try await store.retention.purgeExpired(at: now.addingTimeInterval(86_400 * 40))
                #expect((purged?.partitions.dropped ?? 0) >= PartitionedTable.all.count)
                #expect(try await database.query("SELECT relname FROM pg_class WHERE relname LIKE '%\\_before\\_%'").isEmpty)
                #expect(try await Self.count("apps", in: database) == 1)
            }
        }
    }

    static let app = UUID(uuidString: "6A0C2B1E-6F2B-4D8A-9A55-0B8C7F1E2D3C")!

    /// One row per table of the schema at version 13, written as the code of that version wrote them.
    static func rows(at now: Date) -> [SQL] {
        let (app, later, blob): (SQLValue, SQLValue, SQLValue) = (.uuid(Self.app), .date(now.addingTimeInterval(300)), .bytes([1, 2, 3]))
        let at: SQLValue = .date(now)
        return [
            """
            INSERT INTO apps (app_id, app_key, name, platforms, status, created_at, updated_at, ztoken_ttl_seconds, retention_days) VALUES (\(app),
              'shop1', 'Shop', 'ios', 'active', \(at), \(at), 300, 30)
            """,
            "INSERT INTO admin_tokens (token_id, name, token_hash, created_at) VALUES (\(.uuid(UUID())), 'ops', \(blob), \(at))",
            "INSERT INTO app_events (app_id, event_id, name, created_at) VALUES (\(app), 3301, 'login', \(at))",
            "INSERT INTO app_secrets (app_id, kind, version, sealed, created_at) VALUES (\(app), 'sdk', 1, \(blob), \(at))",
            """
            INSERT INTO attesters (app_id, attest_id, kind, pow_format, max_number, cost, key_prefix, adaptive, challenge_ttl_seconds,
              token_ttl_seconds, token_header, algorithm, routes, status, created_at, updated_at, require_signature, require_hardware)
            VALUES (\(app), 'login', 'pow', 'altcha-v2', 100000, 1000, '00', 0, 300, 600, 'X-Attestation', 'ES256', '[]', 'active', \(at), \(at), 0,
              0)
            """,
            """
            INSERT INTO attested_keys (app_id, key_id, platform, attest_id, public_key, counter, facts, attested_at, last_used_at)
            VALUES (\(app), 'key-1', 'app_attest', 'login', \(blob), 0, '{}', \(at), \(at))
            """,
            """
            INSERT INTO audit_log (occurred_at, actor, action, target_type, target_id, app_id) VALUES (\(at), 'cli:test', 'app.create', 'app',
              'shop1', \(app))
            """,
            """
            INSERT INTO devices (app_id, device_id, client_device_id, collect_type, environment, first_seen, last_seen, key_epoch)
            VALUES (\(app), 'device-1', 'client-1', 0, 0, \(at), \(at), 1)
            """,
            "INSERT INTO gatehouse_settings (name, value) VALUES ('master_key_check', \(blob))",
            """
            INSERT INTO risk_decisions (app_id, decision_id, decided_at, event_id, account_id, device_id, token_id, token_state, score, decision, tags)
            VALUES (\(app), \(.uuid(UUID())), \(at), 3301, 'u1', 'device-1', 'token-1', 'fresh', 0, 'pass', '[]')
            """,
            """
            INSERT INTO risk_lists (app_id, entry_id, kind, subject, value, created_at) VALUES (\(app), \(.uuid(UUID())), 'deny', 'ip',
              '203.0.113.9', \(at))
            """,
            "INSERT INTO risk_rules (app_id, scope, rules, updated_at) VALUES (\(app), 0, '{}', \(at))",
            "INSERT INTO sdk_configs (app_id, version, protected_hosts, updated_at) VALUES (\(app), 1, '[]', \(at))",
            "INSERT INTO signing_keys (kid, sealed_key, created_at) VALUES ('kid-1', \(blob), \(at))",
            """
            INSERT INTO storage_roles (app_id, role_id, provider, sts_endpoint, region, role_arn, duration_seconds, max_duration_seconds,
              addressing, attest_id, require_risk_decision, self_signed, sealed_key, status, created_at, updated_at, require_hardware)
            VALUES (\(app), 'uploads', 'aws', 'https://sts.example', 'us-east-1', 'arn:aws:iam::1:role/u', 900, 3600, 'virtual', 'login', 0, 0,
              \(blob),
              'active', \(at), \(at), 0)
            """,
            """
            INSERT INTO sts_credentials (app_id, role_id, cache_key, sealed_credentials, expires_at, created_at) VALUES (\(app), 'uploads', 'k',
              \(blob), \(later), \(at))
            """,
            "INSERT INTO velocity_edges (app_id, kind, subject, member, last_seen) VALUES (\(app), 1, 'device-1', 'u1', \(at))",
            "INSERT INTO ztoken_pages (app_id, token_id, page_url, expires_at) VALUES (\(app), 'token-1', 'https://shop.example', \(later))",
            "INSERT INTO attest_token_uses (app_id, jti, uses, expires_at) VALUES (\(app), 'jti-1', 1, \(later))",
            """
            INSERT INTO captcha_challenges (app_id, challenge_id, language, answer_x, answer_y, attempts_left, state, created_at, expires_at)
            VALUES (\(app), 'challenge-1', 'en', 120, 40, 2, 'passed', \(at), \(later))
            """,
            """
            INSERT INTO signature_failures (app_id, failure_id, device_id, reason, failed_at, expires_at) VALUES (\(app), \(.uuid(UUID())),
              'device-1', 'badSignature', \(at), \(later))
            """,
        ] + singleUse(at: now)
    }

    /// The rows whose key makes something usable once.
    static func singleUse(at now: Date) -> [SQL] {
        let (app, at, later): (SQLValue, SQLValue, SQLValue) = (.uuid(Self.app), .date(now), .date(now.addingTimeInterval(300)))
        return [
            """
            INSERT INTO consumed_ztokens (app_id, token_id, device_id, consumed_at, expires_at) VALUES (\(app), 'token-1', 'device-1', \(at),
              \(later))
            """,
            "INSERT INTO sdk_nonces (app_id, nonce, expires_at) VALUES (\(app), 'nonce-1', \(later))",
            "INSERT INTO attest_solutions (app_id, replay_key, expires_at) VALUES (\(app), 'v2:nonce-1', \(later))",
            """
            INSERT INTO captcha_passes (app_id, token_hash, challenge_id, solved_at, expires_at) VALUES (\(app), 'hash-1', 'challenge-1', \(at),
              \(later))
            """,
        ]
    }

    static func tables(in database: any SQLDatabase) async throws -> [String] {
        let sql: SQL =
            database.dialect == .postgres
            ? "SELECT tablename AS name FROM pg_tables WHERE schemaname = current_schema() AND tablename <> 'gatehouse_migrations'"
            : "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT IN ('gatehouse_migrations', 'sqlite_sequence')"
        return try await database.query(sql).map { try $0.text("name") }.sorted()
    }

    /// Table names come from the catalog, never from input.
    static func count(_ table: String, in database: any SQLDatabase) async throws -> Int64 {
        try await database.query("SELECT count(*) AS rows FROM \(identifier: table)").first?.int("rows") ?? -1
    }
}
