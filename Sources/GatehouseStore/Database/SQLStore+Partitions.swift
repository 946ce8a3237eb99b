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
extension SQLStore {
    /// Creates the ranges due ahead of `now`. Nil when another instance holds the purge lock (that
    /// one is creating them); nothing to do on SQLite.
    public func keepPartitions(at now: Date) async throws -> PartitionReport? {
        guard database.dialect == .postgres else { return PartitionReport() }
        return try await database.ifUnlocked(Self.purgeLockKey) { locked in
            var report = PartitionReport()
            for table in PartitionedTable.all {
                let plan = table.plan(existing: try await Self.partitions(of: table, in: locked), at: now, horizon: .distantPast)
                report.created += try await Self.create(plan.create, of: table, in: locked)
            }
            return report
        }
    }

    /// Creates the ranges due ahead of `now` and drops those that end at or before `horizon`.
    static func keep(_ table: PartitionedTable, at now: Date, horizon: Date, in database: any SQLDatabase) async throws -> PartitionReport {
        let plan = table.plan(existing: try await partitions(of: table, in: database), at: now, horizon: horizon)
        let created = try await create(plan.create, of: table, in: database)
        for name in plan.drop {
            try await bounded(in: database) { transaction in try await transaction.query("DROP TABLE \(name)", []) }
        }
        return PartitionReport(created: created, dropped: plan.drop.count)
    }

    static func partitions(of table: PartitionedTable, in database: any SQLDatabase) async throws(StoreError) -> [String] {
        try await database.query(
            "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid WHERE i.inhparent = to_regclass($1)",
            [.text(table.name)]
        ).map { row throws(StoreError) in try row.text("name") }
    }

    /// Each range is made as a table of its own, given the rows the default partition holds for it,
    /// then attached: creating it in place fails while the default partition holds such rows.
    static func create(_ ranges: [PartitionedTable.Range], of table: PartitionedTable, in database: any SQLDatabase) async throws -> Int {
        for range in ranges {
            try await bounded(in: database) { transaction in
                try await transaction.query("CREATE TABLE \(range.name) (LIKE \(table.name) INCLUDING DEFAULTS INCLUDING CONSTRAINTS)", [])
                try await transaction.query(
                    """
                    WITH moved AS (DELETE FROM \(table.defaultPartition) WHERE \(table.key) >= $1 AND \(table.key) < $2 RETURNING *)
                    INSERT INTO \(range.name) SELECT * FROM moved
                    """,
                    [.date(range.from), .date(range.to)]
                )
                try await transaction.query(
                    "ALTER TABLE \(table.name) ATTACH PARTITION \(range.name) FOR VALUES FROM ("
                        + PartitionedTable.literal(range.from) + ") TO (" + PartitionedTable.literal(range.to) + ")",
                    []
                )
            }
        }
        return ranges.count
    }

    /// How long a change waits for a lock before it gives up for this round.
    static let partitionLockTimeout = "1s"

    private static func bounded(in database: any SQLDatabase, _ body: @escaping @Sendable (any SQLDatabase) async throws -> Void) async throws {
        try await database.transaction { transaction in
            try await transaction.query("SET LOCAL lock_timeout = '\(partitionLockTimeout)'", [])
            try await body(transaction)
        }
    }
}
