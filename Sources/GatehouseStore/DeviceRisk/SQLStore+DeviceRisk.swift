import Foundation
import GatehouseCore

extension SQLStore: DeviceRiskStore {
    static let purgeLockKey: Int64 = 0x6761_7465_7075_7267  // "gatepurg"

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
        guard let json = try? JSONEncoder().encode(rules) else { throw .corruptRow("rules do not encode") }
        try await changing(audit) { transaction in
            try await transaction.query(
                """
                INSERT INTO risk_rules (app_id, scope, rules, updated_at) VALUES (\(.uuid(appID.rawValue)), \(.int(Int64(scope))),
                  \(.text(String(decoding: json, as: UTF8.self))), \(.date(now)))
                ON CONFLICT (app_id, scope) DO UPDATE SET rules = excluded.rules, updated_at = excluded.updated_at
                """
            )
        }
    }

    public func addListEntry(_ entry: RiskListEntry, audit: AuditEntry) async throws(StoreError) {
        try await changing(audit) { transaction in
            try await transaction.query(
                """
                INSERT INTO risk_lists (app_id, entry_id, kind, subject, value, note, created_at) VALUES (\(.uuid(entry.appID.rawValue)),
                  \(.uuid(entry.id)), \(.text(entry.kind.rawValue)), \(.text(entry.subject.rawValue)), \(.text(entry.value)),
                  \(.optional(entry.note)), \(.date(entry.createdAt)))
                """
            )
        }
    }

    public func listEntries(appID: AppID) async throws(StoreError) -> [RiskListEntry] {
        try await Self.listEntries(appID: appID, in: database)
    }

    public func removeListEntry(appID: AppID, id: UUID, audit: AuditEntry) async throws(StoreError) {
        try await changing(audit) { transaction in
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

    public func purgeExpired(at now: Date) async throws -> PurgeReport? {
        let partitioned = database.dialect == .postgres
        return try await database.ifUnlocked(Self.purgeLockKey) { locked in
            var report = PurgeReport()
            var oldestKept: [(AppID, Date)] = []
            for app in try await locked.query("SELECT app_id, retention_days FROM apps") {
                let settings = AppSettings(ztokenTTLSeconds: AppSettings.standard.ztokenTTLSeconds, retentionDays: Int(try app.int("retention_days")))
                oldestKept.append((AppID(try app.uuid("app_id")), settings.oldestDecisionKept(at: now)))
            }
            if partitioned {
                // A day of decisions goes whole once every app may lose it; with no app, no day may go.
                report.partitions = try await Self.keepEveryTable(at: now, decisionsBefore: oldestKept.map(\.1).min() ?? .distantPast, in: locked)
            }
            // Rows of an app keeping decisions for less than the longest retention, and rows outside
            // the daily ranges (from before the partitions, or in the default one), go by rows.
            for (app, since) in oldestKept {
                report.decisions += try await Self.deleteInBatches(
                    """
                    DELETE FROM risk_decisions WHERE app_id = \(app.rawValue) AND decision_id IN
                      (SELECT decision_id FROM risk_decisions WHERE app_id = \(app.rawValue) AND decided_at < \(since) LIMIT \(Self.purgeBatch))
                    RETURNING decision_id
                    """,
                    in: locked
                )
                try await Self.purgeActivity(of: app, before: since, in: locked)
            }
            // On PostgreSQL only the default range of an expiring table is deleted by rows: the others
            // are dropped whole above.
            for (table, id, count) in Self.expiringRows {
                report[keyPath: count] += try await Self.deleteExpired(
                    from: partitioned ? table.defaultPartition : table.name,
                    key: id,
                    before: now.addingTimeInterval(-table.grace),
                    in: locked
                )
            }
            report.ztokens += try await Self.deleteExpired(
                from: "ztoken_pages",
                key: "token_id",
                before: now.addingTimeInterval(-ZToken.clockSkew),
                in: locked
            )
            report.attestations += try await Self.deleteExpired(from: "attest_token_uses", key: "jti", before: now, in: locked)
            report.credentials = try await Self.deleteExpired(from: "sts_credentials", key: "cache_key", before: now, in: locked)
            report.velocityEdges = try await Self.deleteInBatches(
                """
                DELETE FROM velocity_edges WHERE (app_id, kind, subject, member) IN
                  (SELECT app_id, kind, subject, member FROM velocity_edges WHERE last_seen < \(now.addingTimeInterval(-25 * 3_600)) LIMIT
                    \(Self.purgeBatch))
                RETURNING kind
                """,
                in: locked
            )
            return report
        }
    }

    /// The expiring tables, with the column that names a row and the count of the report it adds to.
    static var expiringRows: [(PartitionedTable, String, WritableKeyPath<PurgeReport, Int>)] {
        [
            (.consumedZTokens, "token_id", \.ztokens), (.sdkNonces, "nonce", \.nonces), (.signatureFailures, "failure_id", \.nonces),
            (.attestSolutions, "replay_key", \.attestations), (.captchaPasses, "token_hash", \.captchas),
            (.captchaChallenges, "challenge_id", \.captchas),
        ]
    }

    /// Rows are deleted a bounded batch per statement, so a large backlog neither holds locks for long
    /// nor loads every deleted key at once.
    static let purgeBatch: Int64 = 1000

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
