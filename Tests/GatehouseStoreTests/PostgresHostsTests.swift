import Foundation
import GatehouseTestSupport
import Testing

@testable import GatehouseStore

/// A multi-host URL against the real PostgreSQL: statements skip a host that is gone, are refused
/// within the probe timeout while no host takes writes, and write again once the database does, with
/// no restart. A database made read-only for new sessions, its sessions ended, stands in for a primary
/// demoted under the instance; moving between two live hosts is tests/interop/failover.py's, with a
/// real pg_auto_failover formation.
@Suite struct PostgresHostsTests {
    @Test func statementsFollowTheHostThatTakesWrites() async throws {
        guard TestStoreKind.available.contains(.postgres), let adminURL = TestStoreKind.postgresURL else { return }
        try await withTestDatabase(.postgres) { database in try await Self.followTheWritableHost(database, adminURL: adminURL) }
    }

    /// The test database's URL with a host before it where nothing listens (port 1: gone), asking for
    /// the writable one; and the database's name.
    static func multiHostURL(_ database: TestDatabase) throws -> (url: String, name: String) {
        guard case .postgres(let url) = database.location, var components = URLComponents(string: url), let port = components.port,
            let name = components.path.split(separator: "/").last.map(String.init)
        else { throw TestSetupError("no PostgreSQL URL") }
        components.host = nil
        components.port = nil
        components.queryItems = (components.queryItems ?? []) + [URLQueryItem(name: "target_session_attrs", value: "read-write")]
        let multiHost = components.string!.replacingOccurrences(of: "@/", with: "@127.0.0.1:1,127.0.0.1:\(port)/")
        #expect(multiHost.contains("@127.0.0.1:1,127.0.0.1:\(port)/"), "\(multiHost)")
        return (multiHost, name)
    }

    static func followTheWritableHost(_ database: TestDatabase, adminURL: String) async throws {
        let (multiHost, name) = try multiHostURL(database)

        @Sendable func administer(_ statement: String) async throws {
            try await StoreService.withStore(.postgres(url: adminURL), logger: TestDatabase.logger) { store in try await store.execute(statement) }
        }
        // What a demotion does to the sessions: ended, and new ones read-only (or writable again).
        @Sendable func setReadOnly(_ on: Bool) async throws {
            try await administer(on ? "ALTER DATABASE \(name) SET default_transaction_read_only = on" : "ALTER DATABASE \(name) RESET ALL")
            try await administer("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '\(name)'")
        }

        try await StoreService.withStore(.postgres(url: multiHost), logger: TestDatabase.logger) { store in
            // A probe that does not answer within its timeout counts its host out for a watch period,
            // as it must for a host that hangs; on two cores running the whole suite, a live host's
            // probe can take that long. So every statement expected to succeed is retried until a
            // deadline, as a client retries a 503, and only the refusals are asked once.
            let created = await Self.retried(until: .now + .seconds(20)) {
                try await store.database.query("CREATE TABLE IF NOT EXISTS writes (n integer)")
                try await store.database.query("INSERT INTO writes VALUES (1)")
            }
            #expect(created != nil)

            try await setReadOnly(true)
            var refused: StoreError?
            do { try await store.database.query("INSERT INTO writes VALUES (2)") } catch { refused = error as? StoreError }
            #expect(refused.map { if case .unavailable = $0 { true } else { false } } == true, "\(String(describing: refused))")
            // Refused by the hosts' own answer ("no writable database"), not by the statement's
            // timeout ("did not answer in time"): the message says which, whatever the machine's
            // load, where a wall-clock bound between the probe and the statement timeout did not
            // (4.25 s against 3 s with the whole suite running on two cores).
            var again: StoreError?
            do { try await store.database.query("INSERT INTO writes VALUES (3)") } catch { again = error as? StoreError }
            let reason = again.map { if case .unavailable(let reason) = $0 { reason } else { "" } } ?? ""
            #expect(reason.contains("no writable database"), "no writable host: refused without waiting out the timeout (\(reason))")

            try await setReadOnly(false)
            // The pools may also still hold connections the demotion ended: a statement that meets one
            // fails, and a probe that meets two in a row counts the host out.
            let deadline = ContinuousClock.now + .seconds(20)
            let written = await Self.retried(until: deadline) { try await store.database.query("INSERT INTO writes VALUES (4)") }
            #expect(written != nil, "writes again on the same store, no restart")
            let refusedRows = await Self.retried(until: deadline) {
                try await store.database.query("SELECT count(*) AS n FROM writes WHERE n IN (2, 3)").first?.int("n") ?? -1
            }
            #expect(refusedRows == 0, "nothing refused was written")
            // The group commits' pool follows the same host.
            let batched = await Self.retried(until: deadline) { try await store.database.forBatches.query("INSERT INTO writes VALUES (5)") }
            #expect(batched != nil, "the batch pool writes on the host found")
            let batchedRows = await Self.retried(until: deadline + .seconds(5)) {
                try await store.database.query("SELECT count(*) AS n FROM writes WHERE n = 5").first?.int("n") ?? -1
            }
            // At least once: a retried insert whose first answer was lost may have landed twice.
            #expect((batchedRows ?? 0) >= 1, "\(String(describing: batchedRows))")
        }
    }

    /// A host is asked on connections of its own: while requests hold every connection of the main
    /// pool, a probe still gets its answer. (Asked on the main pool, it waited for a lease, outlasted its
    /// timeout and counted the live host out.) Only probes answered inside the window in which the pool
    /// is held count, so the test fails with the probe on the main pool, whose lease comes only after.
    @Test func aBusyPoolDoesNotCountItsHostOut() async throws {
        guard TestStoreKind.available.contains(.postgres) else { return }
        try await withTestDatabase(.postgres) { database in
            let (multiHost, _) = try Self.multiHostURL(database)
            try await StoreService.withStore(.postgres(url: multiHost), logger: TestDatabase.logger) { store in
                let hosts = try #require(((store.database as? BoundedDatabase)?.inner as? PostgresDatabase)?.hosts)
                _ = await Self.retried(until: .now + .seconds(20)) { try await store.database.query("SELECT 1 AS n") }
                #expect(hosts.chosenIndex == 1)
                // `withStore`'s pool has 4 connections: each held by a 4 s sleep from `start` on.
                let start = ContinuousClock.now
                let held = Task {
                    try await withThrowingTaskGroup(of: Void.self) { group in
                        for _ in 0..<4 { group.addTask { try await store.database.query("SELECT pg_sleep(4) AS slept") } }
                        try await group.waitForAll()
                    }
                }
                while store.database.usage.inUse < 4, ContinuousClock.now - start < .seconds(3) { try await Task.sleep(for: .milliseconds(10)) }
                let window = Duration.milliseconds(3_800)
                var answeredWhileHeld = false
                while !answeredWhileHeld, ContinuousClock.now - start < window {
                    answeredWhileHeld = await hosts.isWritable(1) && ContinuousClock.now - start < window
                }
                try await held.value
                #expect(answeredWhileHeld, "no probe was answered while the main pool was held")
            }
        }
    }

    /// `statement`'s result once it succeeds, or nil if it has not by `deadline`.
    static func retried<T>(until deadline: ContinuousClock.Instant, _ statement: () async throws -> T) async -> T? {
        while true {
            if let result = try? await statement() { return result }
            guard ContinuousClock.now < deadline else { return nil }
            try? await Task.sleep(for: .milliseconds(200))
        }
    }

    /// The group commits' batches run on connections of their own that plan every prepared statement
    /// once for any values, so that a batch does not ask for it in a round trip of its own, and never
    /// compile it (JIT); the main pool keeps PostgreSQL's choices (its listings' optional filters need
    /// plans for their values).
    @Test func theGroupCommitsHaveConnectionsThatPlanOnceForAnyValues() async throws {
        guard TestStoreKind.available.contains(.postgres) else { return }
        try await withMigratedStore(.postgres) { (store, _) async throws in
            func mode(_ database: any SQLDatabase) async throws -> (String, String, Bool) {
                try await database.transaction { transaction in
                    let row = try await transaction.query(
                        "SELECT current_setting('plan_cache_mode') AS mode, current_setting('jit') AS jit"
                    ).first
                    return (try row?.text("mode") ?? "", try row?.text("jit") ?? "", transaction.plansGenerically)
                }
            }
            let (batches, main) = (try await mode(store.database.forBatches), try await mode(store.database))
            #expect(batches == ("force_generic_plan", "off", true))
            // The main pool's JIT is the cluster's own setting, whatever it is.
            #expect(main.0 == "auto" && !main.2)
            #expect(!store.database.plansGenerically && store.database.forBatches.plansGenerically)
        }
    }
}
