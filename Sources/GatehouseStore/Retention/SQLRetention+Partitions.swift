import Foundation
import GatehouseCore

/// What a keeper round did to the time ranges of the partitioned tables.
public struct PartitionReport: Sendable, Equatable {
    public var created = 0
    public var dropped = 0

    public init(created: Int = 0, dropped: Int = 0) {
        self.created = created
        self.dropped = dropped
    }
}

/// The ranges of the partitioned tables on PostgreSQL (TimePartitions.swift says which and why).
/// Every change runs under the purge lock, so instances never race to create one range, and in a
/// transaction bounded by a lock timeout: dropping a range locks its table for a moment, and a drop
/// that would queue writes behind a long read gives up and is tried again next round.
extension SQLRetention {
    /// Creates the ranges due ahead of `now`. Nil when another instance holds the purge lock (that
    /// one is creating them); nothing to do on SQLite.
    public func keepPartitions(at now: Date) async throws -> PartitionReport? {
        guard database.dialect == .postgres else { return PartitionReport() }
        return try await database.ifUnlocked(Self.purgeLockKey) { locked in
            var report = PartitionReport()
            for table in PartitionedTable.all {
                // Nothing that retention would drop at once: no range that ends before its rows may go.
                guard let existing = try await Self.partitions(of: table, in: locked) else { continue }
                let plan = table.plan(existing: existing, at: now, horizon: now.addingTimeInterval(-table.grace))
                report.created += try await Self.create(plan.create, of: table, in: locked)
            }
            return report
        }
    }

    /// Every partitioned table's round: the decisions' days that end at or before `decisionsBefore`
    /// go, and the expiring tables' ranges once their grace is past.
    static func keepEveryTable(at now: Date, decisionsBefore: Date, in database: any SQLDatabase) async throws -> PartitionReport {
        var report = try await keep(.decisions, at: now, horizon: decisionsBefore, in: database)
        for table in PartitionedTable.expiring {
            let kept = try await keep(table, at: now, horizon: now.addingTimeInterval(-table.grace), in: database)
            report.created += kept.created
            report.dropped += kept.dropped
        }
        return report
    }

    /// Creates the ranges due ahead of `now` and drops those that end at or before `horizon`.
    static func keep(_ table: PartitionedTable, at now: Date, horizon: Date, in database: any SQLDatabase) async throws -> PartitionReport {
        guard let existing = try await partitions(of: table, in: database) else { return PartitionReport() }
        let plan = table.plan(existing: existing, at: now, horizon: horizon)
        let created = try await create(plan.create, of: table, in: database)
        for name in plan.drop {
            try await bounded(in: database) { transaction in try await transaction.query("DROP TABLE \(identifier: name)") }
        }
        return PartitionReport(created: created, dropped: plan.drop.count)
    }

    /// The table's partitions; nil while it is not partitioned (a schema before migration 0014, which
    /// an instance of this build meets until `gatehouse migrate` runs).
    static func partitions(of table: PartitionedTable, in database: any SQLDatabase) async throws(StoreError) -> [String]? {
        let parent = try await database.query("SELECT relkind::text AS kind FROM pg_class WHERE oid = to_regclass(\(.text(table.name)))")
        guard try parent.first?.text("kind") == "p" else { return nil }
        return try await database.query(
            "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = to_regclass(\(.text(table.name)))"
        ).map { row throws(StoreError) in try row.text("name") }
    }

    /// Each range is made as a table of its own, given the rows the default partition holds for it,
    /// then attached: creating it in place fails while the default partition holds such rows. Writes
    /// to the table wait meanwhile (a few milliseconds), or an insert routed to the default partition
    /// just before the attach would fail its check just after it (23514). Moving rows makes reads
    /// wait too: a read planned before the attach and run after it would look for them in the default
    /// partition only, and miss them. Rows reach the default partition only when ranges were missing
    /// (a first start, a long outage), so most ranges move none and never hold up a read.
    static func create(_ ranges: [PartitionedTable.Range], of table: PartitionedTable, in database: any SQLDatabase) async throws -> Int {
        for range in ranges {
            let strays = try await database.query(
                """
                SELECT 1 AS present FROM \(identifier: table.defaultPartition)
                WHERE \(identifier: table.key) >= \(range.from) AND \(identifier: table.key) < \(range.to) LIMIT 1
                """
            )
            try await bounded(in: database) { transaction in
                try await transaction.query(
                    "CREATE TABLE \(identifier: range.name) (LIKE \(identifier: table.name) INCLUDING DEFAULTS INCLUDING CONSTRAINTS)"
                )
                try await transaction.query(
                    "LOCK TABLE \(identifier: table.name) IN \(keyword: strays.isEmpty ? "SHARE ROW EXCLUSIVE" : "ACCESS EXCLUSIVE") MODE"
                )
                let moved = try await transaction.query(
                    """
                    WITH moved AS (
                        DELETE FROM \(identifier: table.defaultPartition)
                        WHERE \(identifier: table.key) >= \(range.from) AND \(identifier: table.key) < \(range.to) RETURNING *
                      ),
                      copied AS (INSERT INTO \(identifier: range.name) SELECT * FROM moved RETURNING 1)
                    SELECT count(*) AS rows FROM copied
                    """
                )
                // Rows that came in between the first look and the lock: the reads wait after all.
                if strays.isEmpty, try moved.first?.int("rows") ?? 0 > 0 {
                    try await transaction.query("LOCK TABLE \(identifier: table.name) IN ACCESS EXCLUSIVE MODE")
                }
                try await transaction.query(
                    """
                    ALTER TABLE \(identifier: table.name) ATTACH PARTITION \(identifier: range.name)
                    FOR VALUES FROM (\(literal: range.from)) TO (\(literal: range.to))
                    """
                )
            }
        }
        return ranges.count
    }

    /// How long a change waits for a lock before it gives up for this round.
    static let partitionLockTimeout: StaticString = "1s"

    private static func bounded(in database: any SQLDatabase, _ body: @escaping @Sendable (any SQLDatabase) async throws -> Void) async throws {
        try await database.transaction { transaction in
            try await transaction.query("SET LOCAL lock_timeout = '\(keyword: partitionLockTimeout)'")
            try await body(transaction)
        }
    }
}
