import Atomics
import Foundation
import GatehouseCore

/// The one implementation of the store protocols, over either database. The SQL is written once in a
/// subset both PostgreSQL and SQLite run (`$n` parameters, `ON CONFLICT`, `RETURNING`); the drivers map
/// types.
public final class SQLStore: Sendable {
    let database: any SQLDatabase
    let ztokenLookupCounter = ManagedAtomic<Int>(0)
    /// SDK nonces, the row every SDK request writes, and risk queries' consumptions go in group
    /// commits; the decisions that consume nothing are written behind their answers.
    let nonceWrites: GroupCommit<NonceUse, Bool>
    let consumptions: GroupCommit<PendingConsumption, RecordedRiskDecision>
    let refusedDecisions: WriteBehind<RiskDecisionRecord>
    /// The console's counters, between flushes.
    let activity = ActivityTally()
    let cachedApps = ReadThroughCache<AppKey, (app: App, secrets: [SealedSecret])>(lifetime: SQLStore.cacheLifetime)
    let cachedAttesters = ReadThroughCache<AppID, [StoredAttester]>(lifetime: SQLStore.cacheLifetime)
    let cachedRiskPolicies = ReadThroughCache<AppID, RiskPolicy>(lifetime: SQLStore.cacheLifetime)

    /// - Parameter queueWait: the longest a write waits in a group commit's queue and statement
    ///   together; with the statement's own bound, a queue behind a hung database cannot grow unbounded waits.
    init(database: any SQLDatabase, queueWait: Duration = .seconds(10)) {
        self.database = database
        nonceWrites = GroupCommit(maximumWriters: Self.batchWriters, maximumBatch: 256, maximumWait: queueWait) { uses in
            try await Self.insertNonces(uses, in: database)
        }
        consumptions = GroupCommit(maximumWriters: Self.batchWriters, maximumBatch: 128, maximumWait: queueWait) { pending in
            try await Self.consumeAndDecide(pending, in: database)
        }
        refusedDecisions = WriteBehind(capacity: Self.decisionsBehindCapacity, maximumBatch: 256) { records in
            try await Self.insertDecisions(records, in: database)
        }
    }

    /// How long another instance's change can go unseen here (see `ReadThroughCache`).
    public static let cacheLifetime = Duration.seconds(2)

    /// Refused tokens' decisions queued at most, unwritten: what a crash can lose of them.
    static let decisionsBehindCapacity = 10_000

    /// Statements of one kind in flight at once; the pool (20 by default) keeps the rest for reads.
    static let batchWriters = 4

    static func appendAudit(_ entry: AuditEntry, in transaction: any SQLDatabase) async throws(StoreError) {
        try await transaction.query(
            """
            INSERT INTO audit_log (occurred_at, actor, action, target_type, target_id, app_id,
                                   before_state, after_state, request_id, source_address)
            VALUES (\(.date(entry.occurredAt)), \(.text(entry.actor.description)), \(.text(entry.action)), \(.text(entry.targetType)),
              \(.text(entry.targetID)), \(.optional(entry.appID?.rawValue)), \(.optional(try encode(entry.before))),
              \(.optional(try encode(entry.after))), \(.optional(entry.requestID)), \(.optional(entry.sourceAddress)))
            """
        )
    }

    /// Runs a write and its audit entry atomically, translating whatever escapes into a `StoreError`.
    func changing(
        _ audit: AuditEntry,
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> Void
    )
        async throws(StoreError)
    {
        // Emptied whatever the outcome: a commit whose answer was lost still changed the rows.
        defer { forgetCachedRows() }
        do {
            try await database.transaction { transaction in
                try await body(transaction)
                try await Self.appendAudit(audit, in: transaction)
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw .unavailable(String(describing: type(of: error)))
        }
    }

    func forgetCachedRows() {
        cachedApps.empty()
        cachedAttesters.empty()
        cachedRiskPolicies.empty()
    }

    private static let snapshotEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    static func encode(_ snapshot: AuditSnapshot?) throws(StoreError) -> String? {
        guard let snapshot else { return nil }
        guard let data = try? snapshotEncoder.encode(snapshot) else { throw .corruptRow("audit snapshot does not encode") }
        return String(decoding: data, as: UTF8.self)
    }

    static func decodeSnapshot(_ text: String?) throws(StoreError) -> AuditSnapshot? {
        guard let text else { return nil }
        guard let snapshot = try? JSONDecoder().decode(AuditSnapshot.self, from: Data(text.utf8)) else {
            throw .corruptRow("audit snapshot is not JSON")
        }
        return snapshot
    }
}

extension SQLStore: StoreMaintenance {
    public var dialect: SQLDialect { database.dialect }
    public var poolUsage: PoolUsage { database.usage }

    public func migrate() async throws -> [Int] {
        try await Migrator(database: database).migrate()
    }

    public func schemaStatus() async throws -> SchemaStatus {
        try await Migrator(database: database).status()
    }

    public func masterKeyCheck(orInsert candidate: [UInt8]) async throws(StoreError) -> [UInt8] {
        try await database.query(
            "INSERT INTO gatehouse_settings (name, value) VALUES ('master_key_check', \(.bytes(candidate))) ON CONFLICT (name) DO NOTHING"
        )
        let rows = try await database.query("SELECT value FROM gatehouse_settings WHERE name = 'master_key_check'")
        guard let row = rows.first else { throw .corruptRow("master key check missing after insert") }
        return try row.bytes("value")
    }
}
