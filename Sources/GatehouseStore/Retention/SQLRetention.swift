import Foundation
import GatehouseCore

/// What Gatehouse keeps and for how long, purged a round at a time under one lock (one instance at a
/// time: the instances' `RetentionPurger` and `gatehouse purge`): on PostgreSQL the time ranges are
/// made ahead and dropped whole past retention (`TimePartitions.swift`); then each capability deletes
/// its own expired rows, as its store declares them (`ExpiringRows`), a bounded batch per statement.
public protocol RetentionStore: Sendable {
    /// Creates the time ranges the partitioned tables need ahead of `now` (PostgreSQL; TimePartitions.swift).
    /// Nil when another instance holds the purge lock and is doing it.
    func keepPartitions(at now: Date) async throws -> PartitionReport?
    /// Deletes what is past its retention: decisions per app (whole UTC days); consumed ztoken ids,
    /// nonces and the rest once expired, on PostgreSQL by dropping whole time ranges. Runs only where
    /// it holds the purge lock (one instance at a time); returns nil when another instance has it.
    func purgeExpired(at now: Date) async throws -> PurgeReport?
}

/// One round as every capability sees it: when it runs, whether the expiring tables are time ranges
/// (so that only their default range is deleted by rows), and since when each app keeps its decisions.
struct RetentionRound: Sendable {
    let now: Date
    let partitioned: Bool
    let decisionsKept: [(app: AppID, since: Date)]
}

/// A capability's store whose rows expire: it deletes its own for a round, and counts what it deleted.
protocol ExpiringRows: Sendable {
    func deleteExpired(_ round: RetentionRound, in locked: any SQLDatabase) async throws -> PurgeReport
}

/// Retention as a component of its own: the round's lock and time ranges here, the rows each store's.
public final class SQLRetention: RetentionStore {
    let database: any SQLDatabase
    /// In the order their foreign keys need.
    private let stores: [any ExpiringRows]

    init(database: any SQLDatabase, stores: [any ExpiringRows]) {
        self.database = database
        self.stores = stores
    }

    static let purgeLockKey: Int64 = 0x6761_7465_7075_7267  // "gatepurg"

    public func purgeExpired(at now: Date) async throws -> PurgeReport? {
        let partitioned = database.dialect == .postgres
        return try await database.ifUnlocked(Self.purgeLockKey) { locked in
            var kept: [(app: AppID, since: Date)] = []
            for app in try await locked.query("SELECT app_id, retention_days FROM apps") {
                let settings = AppSettings(ztokenTTLSeconds: AppSettings.standard.ztokenTTLSeconds, retentionDays: Int(try app.int("retention_days")))
                kept.append((AppID(try app.uuid("app_id")), settings.oldestDecisionKept(at: now)))
            }
            var report = PurgeReport()
            if partitioned {
                // A day of decisions goes whole once every app may lose it; with no app, no day may go.
                report.partitions = try await Self.keepEveryTable(at: now, decisionsBefore: kept.map(\.since).min() ?? .distantPast, in: locked)
            }
            let round = RetentionRound(now: now, partitioned: partitioned, decisionsKept: kept)
            for store in self.stores {
                report += try await store.deleteExpired(round, in: locked)
            }
            return report
        }
    }
}

extension ExpiringRows {
    var purgeBatch: Int64 { SQLRetention.purgeBatch }

    func deleteExpired(
        _ table: PartitionedTable,
        key: String,
        _ round: RetentionRound,
        in database: any SQLDatabase
    ) async throws(StoreError) -> Int {
        try await SQLRetention.deleteExpired(table, key: key, round, in: database)
    }

    func deleteExpired(from table: String, key: String, before cutoff: Date, in database: any SQLDatabase) async throws(StoreError) -> Int {
        try await SQLRetention.deleteExpired(from: table, key: key, before: cutoff, in: database)
    }

    func deleteInBatches(_ sql: SQL, in database: any SQLDatabase) async throws(StoreError) -> Int {
        try await SQLRetention.deleteInBatches(sql, in: database)
    }
}

extension SQLRetention {
    /// Rows are deleted a bounded batch per statement, so a large backlog neither holds locks for long
    /// nor loads every deleted key at once.
    static let purgeBatch: Int64 = 1000

    /// The expired rows of one of the expiring time-ranged tables: on PostgreSQL only its default range
    /// goes by rows (the others were dropped whole).
    static func deleteExpired(
        _ table: PartitionedTable,
        key: String,
        _ round: RetentionRound,
        in database: any SQLDatabase
    ) async throws(StoreError) -> Int {
        try await deleteExpired(
            from: round.partitioned ? table.defaultPartition : table.name,
            key: key,
            before: round.now.addingTimeInterval(-table.grace),
            in: database
        )
    }

    /// Deletes the rows of a table keyed by (app_id, `key`) whose `expires_at` is before `cutoff`.
    static func deleteExpired(from table: String, key: String, before cutoff: Date, in database: any SQLDatabase) async throws(StoreError) -> Int {
        try await deleteInBatches(
            """
            DELETE FROM \(identifier: table) WHERE (app_id, \(identifier: key)) IN
              (SELECT app_id, \(identifier: key) FROM \(identifier: table) WHERE expires_at < \(cutoff) LIMIT \(purgeBatch))
            RETURNING \(identifier: key)
            """,
            in: database
        )
    }

    static func deleteInBatches(_ sql: SQL, in database: any SQLDatabase) async throws(StoreError) -> Int {
        var total = 0
        while true {
            let deleted = try await database.query(sql).count
            total += deleted
            if deleted < purgeBatch { return total }
        }
    }
}
