import Foundation
import GatehouseCore

extension SQLStore: DeviceRiskStore {
    static let purgeLockKey: Int64 = 0x6761_7465_7075_7267  // "gatepurg"

    public var ztokenLookups: Int { ztokenLookupCounter.load(ordering: .relaxed) }

    public func upsertDevice(_ device: Device) async throws(StoreError) -> Device {
        let rows = try await database.query(
            """
            INSERT INTO devices (app_id, device_id, client_device_id, collect_type, platform, sdk_version, model, os_version, screen,
                                 idfv, idfa, wifi_ssid, wifi_bssid, environment, first_seen, last_seen, last_address)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
            ON CONFLICT (app_id, device_id) DO UPDATE SET
                client_device_id = excluded.client_device_id, collect_type = excluded.collect_type, platform = excluded.platform,
                sdk_version = excluded.sdk_version, model = excluded.model, os_version = excluded.os_version, screen = excluded.screen,
                idfv = excluded.idfv, idfa = excluded.idfa, wifi_ssid = excluded.wifi_ssid, wifi_bssid = excluded.wifi_bssid,
                environment = excluded.environment, last_seen = excluded.last_seen, last_address = excluded.last_address,
                key_epoch = devices.key_epoch + 1
            RETURNING *
            """,
            [
                .uuid(device.appID.rawValue), .text(device.id.rawValue), .text(device.clientDeviceID), .int(Int64(device.mode.rawValue)),
                .optional(device.platform?.rawValue), .optional(device.sdkVersion), .optional(device.basic?.model),
                .optional(device.basic?.osVersion), .optional(device.basic?.screen), .optional(device.unique?.idfv),
                .optional(device.unique?.idfa), .optional(device.extra?.wifiSsid), .optional(device.extra?.wifiBssid),
                .int(Int64(device.environment.rawValue)), .date(device.firstSeen), .date(device.lastSeen), .optional(device.lastAddress),
            ]
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
        -> (eventRegistered: Bool, deviceStarted: Bool)
    {
        let rows = try await database.query(
            """
            SELECT
              (SELECT count(*) FROM app_events WHERE app_id = $1 AND event_id = $2) AS events,
              (SELECT count(*) FROM devices WHERE app_id = $1 AND device_id = $3) AS devices
            """,
            [.uuid(appID.rawValue), .int(Int64(eventID.rawValue)), .text(deviceID.rawValue)]
        )
        guard let row = rows.first else { throw .corruptRow("issuance preconditions returned nothing") }
        return (try row.int("events") > 0, try row.int("devices") > 0)
    }

    public func recordIssuedZToken(_ token: IssuedZToken) async throws(StoreError) {
        try await Self.batched { try await self.ztokenWrites.submit(token) }
    }

    public func recordRiskDecision(
        _ keys: RiskQueryKeys,
        judge: @escaping @Sendable (RiskContext) throws -> RiskDecisionRecord
    ) async throws -> RecordedRiskDecision {
        let policy = try await riskPolicy(appID: keys.appID)
        guard let tokenID = keys.tokenID else {
            // Nothing to consume and no device to read (a forged, expired or mismatched token): the
            // decision row is the only write, so it joins a group commit instead of a transaction.
            let context = RiskContext(consumption: nil, device: nil, velocity: nil, policy: policy, eventID: keys.eventID)
            let record = try judge(context)
            try await Self.batched { try await self.decisionWrites.submit(record) }
            return RecordedRiskDecision(record: record, context: context)
        }
        ztokenLookupCounter.wrappingIncrement(ordering: .relaxed)
        do {
            return try await database.transaction { transaction in
                let consumption = try await Self.consume(tokenID, keys, in: transaction)
                var device: Device?
                var velocity: Velocity?
                if let deviceID = keys.deviceID {
                    device = try await Self.device(appID: keys.appID, id: deviceID, in: transaction)
                    velocity = try await Self.velocity(keys, deviceID: deviceID, in: transaction)
                }
                let context = RiskContext(consumption: consumption, device: device, velocity: velocity, policy: policy, eventID: keys.eventID)
                let record = try judge(context)
                try await Self.insertDecisions([record], in: transaction)
                return RecordedRiskDecision(record: record, context: context)
            }
        } catch let error as StoreError {
            throw error
        }
    }

    /// The app's rules and lists, which every risk query applies and operators change now and then.
    func riskPolicy(appID: AppID) async throws(StoreError) -> RiskPolicy {
        try await cachedRiskPolicies.value(for: appID) { () async throws(StoreError) in
            RiskPolicy(
                rules: try await Self.riskRules(appID: appID, in: self.database),
                listEntries: try await Self.listEntries(appID: appID, in: self.database)
            )
        } ?? RiskPolicy(rules: [:], listEntries: [])
    }

    /// The atomic step: the first UPDATE wins; later ones find the row already consumed.
    static func consume(
        _ tokenID: String,
        _ keys: RiskQueryKeys,
        in transaction: any SQLDatabase
    ) async throws(StoreError)
        -> RiskContext.Consumption
    {
        let consumed = try await transaction.query(
            """
            UPDATE ztokens SET consumed_at = $1 WHERE app_id = $2 AND token_id = $3 AND consumed_at IS NULL
            RETURNING issued_from, page_url
            """,
            [.date(keys.now), .uuid(keys.appID.rawValue), .text(tokenID)]
        )
        if let row = consumed.first {
            return .consumed(issuedFrom: try row.optionalText("issued_from"), pageURL: try row.optionalText("page_url"))
        }
        let existing = try await transaction.query(
            "SELECT issued_from, page_url FROM ztokens WHERE app_id = $1 AND token_id = $2",
            [.uuid(keys.appID.rawValue), .text(tokenID)]
        )
        guard let row = existing.first else { return .missing }
        return .alreadyConsumed(issuedFrom: try row.optionalText("issued_from"), pageURL: try row.optionalText("page_url"))
    }

    static func velocity(_ keys: RiskQueryKeys, deviceID: DeviceID, in transaction: any SQLDatabase) async throws(StoreError) -> Velocity {
        let rows = try await transaction.query(
            """
            SELECT
              (SELECT count(*) FROM ztokens WHERE app_id = $1 AND device_id = $2 AND issued_at > $3) AS device_events,
              (SELECT count(DISTINCT account_id) FROM ztokens WHERE app_id = $1 AND device_id = $2 AND issued_at > $4) AS device_accounts,
              (SELECT count(DISTINCT device_id) FROM ztokens WHERE app_id = $1 AND account_id = $5 AND issued_at > $4) AS account_devices,
              (SELECT count(DISTINCT device_id) FROM ztokens WHERE app_id = $1 AND issued_from = $6 AND issued_at > $7) AS ip_devices
            """,
            [
                .uuid(keys.appID.rawValue), .text(deviceID.rawValue), .date(keys.now.addingTimeInterval(-60)),
                .date(keys.now.addingTimeInterval(-86_400)), .text(keys.accountID.rawValue), .optional(keys.clientAddress),
                .date(keys.now.addingTimeInterval(-3_600)),
            ]
        )
        guard let row = rows.first else { throw .corruptRow("velocity query returned nothing") }
        return Velocity(
            deviceEventsLastMinute: Int(try row.int("device_events")),
            deviceAccountsLastDay: Int(try row.int("device_accounts")),
            accountDevicesLastDay: Int(try row.int("account_devices")),
            ipDevicesLastHour: Int(try row.int("ip_devices"))
        )
    }

    static func insertDecisions(_ records: [RiskDecisionRecord], in database: any SQLDatabase) async throws(StoreError) {
        var binds: [SQLValue] = []
        binds.reserveCapacity(records.count * 14)
        let encoder = JSONEncoder()
        for record in records {
            guard let tags = try? encoder.encode(record.verdict.tags) else { throw .corruptRow("tags do not encode") }
            binds += [
                .uuid(record.appID.rawValue), .uuid(record.id), .date(record.decidedAt), .int(Int64(record.eventID.rawValue)),
                .text(record.accountID.rawValue), .optional(record.deviceID?.rawValue), .optional(record.tokenID),
                .text(record.tokenState.rawValue), .optional(record.clientAddress), .optional(record.userAgent), .optional(record.pageURL),
                .int(Int64(record.verdict.score)), .text(record.verdict.decision.rawValue), .text(String(decoding: tags, as: UTF8.self)),
            ]
        }
        try await database.query(
            """
            INSERT INTO risk_decisions (app_id, decision_id, decided_at, event_id, account_id, device_id, token_id, token_state,
                                        client_address, user_agent, page_url, score, decision, tags)
            VALUES
            """ + " " + valuesList(rows: records.count, width: 14),
            binds
        )
    }

    public func decision(appID: AppID, id: UUID) async throws(StoreError) -> RiskDecisionRecord? {
        try await database.query(
            "SELECT * FROM risk_decisions WHERE app_id = $1 AND decision_id = $2",
            [.uuid(appID.rawValue), .uuid(id)]
        ).first.map(Self.decisionRecord)
    }

    public func decisions(
        matching filter: DecisionFilter,
        after cursor: DecisionCursor?,
        limit: Int
    ) async throws(StoreError)
        -> [ListedDecision]
    {
        // One static statement. PostgreSQL cannot type a bare NULL parameter, so each optional filter
        // travels as a 0/1 flag plus a typed placeholder value, and absent bounds as far-away dates.
        let anyUUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        let farPast = Date(millisecondsSince1970: 0)
        let farFuture = Date(millisecondsSince1970: 253_402_300_799_000)
        func flag(_ present: Bool) -> SQLValue { .int(present ? 1 : 0) }
        return try await database.query(
            """
            SELECT risk_decisions.*, apps.app_key FROM risk_decisions JOIN apps ON apps.app_id = risk_decisions.app_id
            WHERE ($1 = 0 OR risk_decisions.app_id = $2) AND ($3 = 0 OR event_id = $4) AND ($5 = 0 OR device_id = $6)
              AND ($7 = 0 OR account_id = $8) AND ($9 = 0 OR decision = $10)
              AND decided_at >= $11 AND decided_at < $12
              AND (decided_at < $13 OR (decided_at = $13 AND decision_id < $14))
            ORDER BY decided_at DESC, decision_id DESC
            LIMIT $15
            """,
            [
                flag(filter.appID != nil), .uuid(filter.appID?.rawValue ?? anyUUID),
                flag(filter.eventID != nil), .int(Int64(filter.eventID?.rawValue ?? 0)),
                flag(filter.deviceID != nil), .text(filter.deviceID?.rawValue ?? ""),
                flag(filter.accountID != nil), .text(filter.accountID?.rawValue ?? ""),
                flag(filter.decision != nil), .text(filter.decision?.rawValue ?? ""),
                .date(filter.from ?? farPast), .date(filter.to ?? farFuture),
                .date(cursor?.decidedAt ?? farFuture), .uuid(cursor?.id ?? anyUUID),
                .int(Int64(limit)),
            ]
        ).map { row throws(StoreError) in
            guard let appKey = try? AppKey(validating: try row.text("app_key")) else { throw .corruptRow("app key of a decision") }
            return ListedDecision(record: try Self.decisionRecord(row), appKey: appKey)
        }
    }

    public func riskRules(appID: AppID) async throws(StoreError) -> [Int: RiskRules] {
        try await Self.riskRules(appID: appID, in: database)
    }

    public func setRiskRules(appID: AppID, scope: Int, rules: RiskRules, at now: Date, audit: AuditEntry) async throws(StoreError) {
        guard let json = try? JSONEncoder().encode(rules) else { throw .corruptRow("rules do not encode") }
        try await changing(audit) { transaction in
            try await transaction.query(
                """
                INSERT INTO risk_rules (app_id, scope, rules, updated_at) VALUES ($1, $2, $3, $4)
                ON CONFLICT (app_id, scope) DO UPDATE SET rules = excluded.rules, updated_at = excluded.updated_at
                """,
                [.uuid(appID.rawValue), .int(Int64(scope)), .text(String(decoding: json, as: UTF8.self)), .date(now)]
            )
        }
    }

    public func addListEntry(_ entry: RiskListEntry, audit: AuditEntry) async throws(StoreError) {
        try await changing(audit) { transaction in
            try await transaction.query(
                "INSERT INTO risk_lists (app_id, entry_id, kind, subject, value, note, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7)",
                [
                    .uuid(entry.appID.rawValue), .uuid(entry.id), .text(entry.kind.rawValue), .text(entry.subject.rawValue), .text(entry.value),
                    .optional(entry.note), .date(entry.createdAt),
                ]
            )
        }
    }

    public func listEntries(appID: AppID) async throws(StoreError) -> [RiskListEntry] {
        try await Self.listEntries(appID: appID, in: database)
    }

    public func removeListEntry(appID: AppID, id: UUID, audit: AuditEntry) async throws(StoreError) {
        try await changing(audit) { transaction in
            let rows = try await transaction.query(
                "DELETE FROM risk_lists WHERE app_id = $1 AND entry_id = $2 RETURNING entry_id",
                [.uuid(appID.rawValue), .uuid(id)]
            )
            guard !rows.isEmpty else { throw StoreError.notFound("no list entry \(id)") }
        }
    }

    public func updateSettings(of app: App, to updated: App, audit: AuditEntry) async throws(StoreError) {
        try await changing(audit) { transaction in
            try await transaction.query(
                "UPDATE apps SET ztoken_ttl_seconds = $1, retention_days = $2, updated_at = $3 WHERE app_id = $4",
                [
                    .int(Int64(updated.settings.ztokenTTLSeconds)), .int(Int64(updated.settings.retentionDays)), .date(updated.updatedAt),
                    .uuid(app.id.rawValue),
                ]
            )
        }
    }

    public func purgeExpired(at now: Date) async throws -> PurgeReport? {
        try await database.ifUnlocked(Self.purgeLockKey) { locked in
            var ztokens = 0
            var decisions = 0
            let apps = try await locked.query("SELECT app_id, retention_days FROM apps", [])
            for app in apps {
                let binds: [SQLValue] = [
                    .uuid(try app.uuid("app_id")), .date(now.addingTimeInterval(-86_400 * Double(try app.int("retention_days")))),
                    .int(Self.purgeBatch),
                ]
                ztokens += try await Self.deleteInBatches(
                    """
                    DELETE FROM ztokens WHERE app_id = $1 AND token_id IN
                      (SELECT token_id FROM ztokens WHERE app_id = $1 AND issued_at < $2 LIMIT $3)
                    RETURNING token_id
                    """,
                    binds,
                    in: locked
                )
                decisions += try await Self.deleteInBatches(
                    """
                    DELETE FROM risk_decisions WHERE app_id = $1 AND decision_id IN
                      (SELECT decision_id FROM risk_decisions WHERE app_id = $1 AND decided_at < $2 LIMIT $3)
                    RETURNING decision_id
                    """,
                    binds,
                    in: locked
                )
            }
            let nonces =
                try await Self.deleteExpired(from: "sdk_nonces", key: "nonce", before: now, in: locked)
                + Self.deleteExpired(from: "signature_failures", key: "failure_id", before: now, in: locked)
            var attestations = 0
            for (table, key) in [("attest_solutions", "replay_key"), ("attest_token_uses", "jti")] {
                attestations += try await Self.deleteExpired(from: table, key: key, before: now, in: locked)
            }
            // Captcha rows outlive their expiry by an hour, so that idempotent siteverify retries still
            // find their pass; passes go first, as they point at their challenge.
            var captchas = 0
            for (table, key) in [("captcha_passes", "token_hash"), ("captcha_challenges", "challenge_id")] {
                captchas += try await Self.deleteExpired(from: table, key: key, before: now.addingTimeInterval(-3600), in: locked)
            }
            var report = PurgeReport(ztokens: ztokens, decisions: decisions, nonces: nonces, attestations: attestations, captchas: captchas)
            report.credentials = try await Self.deleteExpired(from: "sts_credentials", key: "cache_key", before: now, in: locked)
            return report
        }
    }

    /// Rows are deleted a bounded batch per statement, so a large backlog neither holds locks for long
    /// nor loads every deleted key at once.
    static let purgeBatch: Int64 = 1000

    /// Deletes the rows of a table keyed by (app_id, `key`) whose `expires_at` is before `cutoff`.
    static func deleteExpired(from table: String, key: String, before cutoff: Date, in database: any SQLDatabase) async throws(StoreError) -> Int {
        try await deleteInBatches(
            """
            DELETE FROM \(table) WHERE (app_id, \(key)) IN
              (SELECT app_id, \(key) FROM \(table) WHERE expires_at < $1 LIMIT $2)
            RETURNING \(key)
            """,
            [.date(cutoff), .int(purgeBatch)],
            in: database
        )
    }

    static func deleteInBatches(_ sql: String, _ binds: [SQLValue], in database: any SQLDatabase) async throws(StoreError) -> Int {
        var total = 0
        while true {
            let deleted = try await database.query(sql, binds).count
            total += deleted
            if deleted < purgeBatch { return total }
        }
    }
}
