import Atomics
import Foundation
import GatehouseCore
import Synchronization

/// Devices, nonces, ztokens, risk decisions, rules and lists. It owns the request path's batched
/// writes (SDK nonces and risk queries' consumptions in group commits, refused tokens' decisions
/// written behind their answers) and this instance's copy of each app's risk policy.
public final class SQLDeviceRiskStore: CapabilityStore {
    let database: any SQLDatabase
    let changes: StoreChanges
    let activity: ActivityTally
    /// The app's attesters are part of its risk policy (which of them require hardware).
    let attestation: SQLAttestationStore
    let ztokenLookupCounter = ManagedAtomic<Int>(0)
    let nonceWrites: GroupCommit<NonceUse, Bool>
    let consumptions: GroupCommit<PendingConsumption, RecordedRiskDecision>
    let refusedDecisions: WriteBehind<RefusedDecisionRow>
    /// Which refused decisions are stored whole and which counted (`RefusedDecisionSampler`).
    let refusedSampler = Mutex(RefusedDecisionSampler())
    let cachedRiskPolicies: ReadThroughCache<AppID, RiskPolicy>

    /// - Parameter queueWait: the longest a write waits in a group commit's queue and statement
    ///   together; with the statement's own bound, a queue behind a hung database cannot grow unbounded waits.
    init(database: any SQLDatabase, changes: StoreChanges, activity: ActivityTally, attestation: SQLAttestationStore, queueWait: Duration) {
        self.database = database
        self.changes = changes
        self.activity = activity
        self.attestation = attestation
        cachedRiskPolicies = ReadThroughCache(lifetime: SQLStore.cacheLifetime, changes: changes)
        // Replays that a batch finds only at its write go behind their answers too (`consumeAndDecide`).
        let refusedDecisions = WriteBehind<RefusedDecisionRow>(capacity: Self.decisionsBehindCapacity, maximumBatch: 256) { rows in
            try await Self.writeRefused(rows, in: database)
        }
        self.refusedDecisions = refusedDecisions
        let (batches, batchLimit) = database.forGroupCommits
        nonceWrites = GroupCommit(
            maximumWriters: Self.batchWriters,
            anotherWriterAt: Self.anotherWriterAt,
            maximumBatch: 256,
            maximumWait: queueWait,
            batchLimit: batchLimit
        ) { writeBatches in
            try await batches.onOneConnection { connection in try await writeBatches { uses in try await Self.insertNonces(uses, in: connection) } }
        }
        consumptions = GroupCommit(
            maximumWriters: Self.batchWriters,
            anotherWriterAt: Self.anotherWriterAt,
            maximumBatch: 128,
            maximumWait: queueWait,
            batchLimit: batchLimit
        ) { writeBatches in
            try await batches.onOneConnection { connection in
                try await writeBatches { pending in try await Self.consumeAndDecide(pending, in: connection, writingBehind: refusedDecisions) }
            }
        }
    }

    /// Refused tokens' decisions queued at most, unwritten: what a crash can lose of them.
    static let decisionsBehindCapacity = 10_000

    /// Statements of one kind in flight at once, on the batch pools' connections: the nonces' and the
    /// consumptions' writers together fill `PostgresHosts.batchConnections`, so none waits for a connection.
    /// Two, not four: a writer that starts while another's batch is in flight splits the queue
    /// between smaller batches, and each batch costs the server and PostgreSQL its round trips and
    /// its statements' start whatever its size. At 32 connections of risk queries on 2 cores, two
    /// writers answered 1,780 queries a second against four's 1,574, at 979 µs of the machine's CPU
    /// a query against 1,188; one writer left the CPU idle, waiting on its own round trips (1,610 a
    /// second; `bench/risk_ab.py`, docs/PERFORMANCE.md).
    static let batchWriters = PostgresHosts.batchConnections / 2
    /// The second writer starts once this many wait for the first (`GroupCommit`): at half the peak
    /// rate one writer's batches, at the peak both. With 8, `bench/risk_ab.py --paced` read the peak
    /// as with two writers always (1,970 against 1,955 req/s) and the machine's CPU a paced query a
    /// fifth lower (docs/PERFORMANCE.md).
    static let anotherWriterAt = 8
}

extension SQLDeviceRiskStore: DeviceRiskStore {
    public func countActivity(_ keys: [ActivityKey]) { activity.add(keys) }

    public var ztokenLookups: Int { ztokenLookupCounter.load(ordering: .relaxed) }

    public var decisionsBehind: (written: Int, lost: Int, pending: Int) {
        (refusedDecisions.written, refusedDecisions.lost, refusedDecisions.pending)
    }

    public func catchUpWritesBehind() async {
        await refusedDecisions.caughtUp()
    }

    public func upsertDevice(_ device: Device) async throws(StoreError) -> Device {
        let rows = try await database.query(
            """
            INSERT INTO devices (app_id, device_id, client_device_id, collect_type, platform, sdk_version, model, os_version, screen,
                                 idfv, idfa, wifi_ssid, wifi_bssid, environment, first_seen, last_seen, last_address)
            VALUES (\(.uuid(device.appID.rawValue)), \(.text(device.id.rawValue)), \(.text(device.clientDeviceID)),
              \(.int(Int64(device.mode.rawValue))), \(.optional(device.platform?.rawValue)), \(.optional(device.sdkVersion)),
              \(.optional(device.basic?.model)), \(.optional(device.basic?.osVersion)), \(.optional(device.basic?.screen)),
              \(.optional(device.unique?.idfv)), \(.optional(device.unique?.idfa)), \(.optional(device.extra?.wifiSsid)),
              \(.optional(device.extra?.wifiBssid)), \(.int(Int64(device.environment.rawValue))), \(.date(device.firstSeen)),
              \(.date(device.lastSeen)), \(.optional(device.lastAddress)))
            ON CONFLICT (app_id, device_id) DO UPDATE SET
                client_device_id = excluded.client_device_id, collect_type = excluded.collect_type, platform = excluded.platform,
                sdk_version = excluded.sdk_version, model = excluded.model, os_version = excluded.os_version, screen = excluded.screen,
                idfv = excluded.idfv, idfa = excluded.idfa, wifi_ssid = excluded.wifi_ssid, wifi_bssid = excluded.wifi_bssid,
                environment = excluded.environment, last_seen = excluded.last_seen, last_address = excluded.last_address,
                key_epoch = devices.key_epoch + 1
            RETURNING *
            """
        )
        guard let row = rows.first else { throw .corruptRow("device upsert returned nothing") }
        return try Self.device(row)
    }

    public func device(appID: AppID, id: DeviceID) async throws(StoreError) -> Device? {
        try await Self.device(appID: appID, id: id, in: database)
    }

    public func useNonce(appID: AppID, nonce: String, expiresAt: Date) async throws(StoreError) -> Bool {
        try await Self.batched { try await self.nonceWrites.submit(NonceUse(appID: appID, nonce: nonce, expiresAt: expiresAt)) }
    }

    public func issuancePreconditions(
        appID: AppID,
        eventID: EventID,
        deviceID: DeviceID
    ) async throws(StoreError)
        -> (eventRegistered: Bool, keyEpoch: Int?)
    {
        let rows = try await database.query(
            """
            SELECT
              (SELECT count(*) FROM app_events WHERE app_id = \(.uuid(appID.rawValue)) AND event_id = \(.int(Int64(eventID.rawValue)))) AS events,
              (SELECT max(key_epoch) FROM devices WHERE app_id = \(.uuid(appID.rawValue)) AND device_id = \(.text(deviceID.rawValue))) AS key_epoch
            """
        )
        guard let row = rows.first else { throw .corruptRow("issuance preconditions returned nothing") }
        return (try row.int("events") > 0, try row.optionalInt("key_epoch").map(Int.init))
    }

    public func recordZTokenPage(appID: AppID, tokenID: String, pageURL: String, expiresAt: Date) async throws(StoreError) {
        try await database.query(
            """
            INSERT INTO ztoken_pages (app_id, token_id, page_url, expires_at) VALUES (\(.uuid(appID.rawValue)), \(.text(tokenID)),
              \(.text(pageURL)), \(.date(expiresAt)))
            """
        )
    }

    public func registeredEvents(appID: AppID) async throws(StoreError) -> Set<Int> {
        try await Self.registeredEvents(appID: appID, in: database)
    }

    static func registeredEvents(appID: AppID, in database: any SQLDatabase) async throws(StoreError) -> Set<Int> {
        var events = Set<Int>()
        for row in try await database.query("SELECT event_id FROM app_events WHERE app_id = \(.uuid(appID.rawValue))") {
            events.insert(Int(try row.int("event_id")))
        }
        return events
    }

    public func riskRules(appID: AppID) async throws(StoreError) -> [Int: RiskRules] {
        try await Self.riskRules(appID: appID, in: database)
    }

    public func setRiskRules(appID: AppID, scope: Int, rules: RiskRules, at now: Date, audit: AuditEntry) async throws(StoreError) {
        try await publishing(appID, audit) { transaction in try await Self.writeRules(rules, appID: appID, scope: scope, at: now, in: transaction) }
    }

    static func writeRules(_ rules: RiskRules, appID: AppID, scope: Int, at now: Date, in transaction: any SQLDatabase) async throws(StoreError) {
        guard let json = try? JSONEncoder().encode(rules) else { throw .corruptRow("rules do not encode") }
        try await transaction.query(
            """
            INSERT INTO risk_rules (app_id, scope, rules, updated_at) VALUES (\(.uuid(appID.rawValue)), \(.int(Int64(scope))),
              \(.text(String(decoding: json, as: UTF8.self))), \(.date(now)))
            ON CONFLICT (app_id, scope) DO UPDATE SET rules = excluded.rules, updated_at = excluded.updated_at
            """
        )
    }

    public func addListEntry(_ entry: RiskListEntry, audit: AuditEntry) async throws(StoreError) {
        try await publishing(entry.appID, audit) { transaction in try await Self.insert(entry, in: transaction) }
    }

    static func insert(_ entry: RiskListEntry, in transaction: any SQLDatabase) async throws(StoreError) {
        try await transaction.query(
            """
            INSERT INTO risk_lists (app_id, entry_id, kind, subject, value, note, created_at) VALUES (\(.uuid(entry.appID.rawValue)),
              \(.uuid(entry.id)), \(.text(entry.kind.rawValue)), \(.text(entry.subject.rawValue)), \(.text(entry.value)),
              \(.optional(entry.note)), \(.date(entry.createdAt)))
            """
        )
    }

    public func listEntries(appID: AppID) async throws(StoreError) -> [RiskListEntry] {
        try await Self.listEntries(appID: appID, in: database)
    }

    public func removeListEntry(appID: AppID, id: UUID, audit: AuditEntry) async throws(StoreError) {
        try await publishing(appID, audit) { transaction in
            let rows = try await transaction.query(
                "DELETE FROM risk_lists WHERE app_id = \(.uuid(appID.rawValue)) AND entry_id = \(.uuid(id)) RETURNING entry_id"
            )
            guard !rows.isEmpty else { throw StoreError.notFound("no list entry \(id)") }
        }
    }

    public func updateSettings(of app: App, to updated: App, audit: AuditEntry) async throws(StoreError) {
        try await changing(audit) { transaction in
            try await transaction.query(
                """
                UPDATE apps SET ztoken_ttl_seconds = \(.int(Int64(updated.settings.ztokenTTLSeconds))), retention_days =
                  \(.int(Int64(updated.settings.retentionDays))), updated_at = \(.date(updated.updatedAt)) WHERE app_id = \(.uuid(app.id.rawValue))
                """
            )
        }
    }

}

extension SQLDeviceRiskStore: ExpiringRows {
    /// Decisions and refused counts past their app's retention (by rows, where no whole day could go), consumed ztoken
    /// ids, SDK nonces and bridge pages past their expiry, and velocity pairs no window reaches any
    /// more (last seen over 25 hours ago).
    func deleteExpired(_ round: RetentionRound, in locked: any SQLDatabase) async throws -> PurgeReport {
        var report = PurgeReport()
        for (app, since) in round.decisionsKept {
            report.decisions += try await deleteInBatches(
                """
                DELETE FROM risk_decisions WHERE app_id = \(app.rawValue) AND decision_id IN
                  (SELECT decision_id FROM risk_decisions WHERE app_id = \(app.rawValue) AND decided_at < \(since) LIMIT \(purgeBatch))
                RETURNING decision_id
                """,
                in: locked
            )
            // The counts of refused decisions go with the decisions they stand for.
            report.decisions += try await deleteInBatches(
                """
                DELETE FROM refused_decision_counts WHERE app_id = \(app.rawValue) AND (minute, client_address, token_state) IN
                  (SELECT minute, client_address, token_state FROM refused_decision_counts WHERE app_id = \(app.rawValue)
                    AND minute < \(since) LIMIT \(purgeBatch))
                RETURNING decisions
                """,
                in: locked
            )
        }
        report.ztokens += try await deleteExpired(.consumedZTokens, key: "token_id", round, in: locked)
        report.nonces += try await deleteExpired(.sdkNonces, key: "nonce", round, in: locked)
        report.ztokens += try await deleteExpired(
            from: "ztoken_pages",
            key: "token_id",
            before: round.now.addingTimeInterval(-ZToken.clockSkew),
            in: locked
        )
        report.velocityEdges += try await deleteInBatches(
            """
            DELETE FROM velocity_edges WHERE (app_id, kind, subject, member) IN
              (SELECT app_id, kind, subject, member FROM velocity_edges WHERE last_seen < \(round.now.addingTimeInterval(-25 * 3_600))
                LIMIT \(purgeBatch))
            RETURNING kind
            """,
            in: locked
        )
        return report
    }
}
