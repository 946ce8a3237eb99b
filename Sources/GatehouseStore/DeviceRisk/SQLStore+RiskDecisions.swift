import Foundation
import GatehouseCore

/// Risk queries: what was read for the token's device, then its consumption, judgement and decision
/// in a group commit (`consumeAndDecide`); a refused token's decision is written behind the answer;
/// and the decision log.
extension SQLStore {
    public func recordRiskDecision(
        _ query: RiskQuery,
        decide: @escaping @Sendable (RiskFacts) throws -> RiskDecisionRecord
    ) async throws -> RecordedRiskDecision {
        let policy = try await riskPolicy(appID: query.appID)
        guard let tokenID = query.tokenID, let claims = query.claims, let deviceID = query.deviceID else {
            // Nothing to consume and no device to read (a forged, expired or mismatched token): the
            // decision row is the only write, and nobody reads it before the answer.
            let facts = RiskFacts(consumption: nil, device: nil, velocity: nil, policy: policy, eventID: query.eventID)
            let record = try decide(facts)
            refusedDecisions.enqueue(record)
            return RecordedRiskDecision(record: record, facts: facts)
        }
        ztokenLookupCounter.wrappingIncrement(ordering: .relaxed)
        // Only a query with a device can be tagged attestation.missing; the attesters are the
        // instance's copy (a refused token never asks).
        let hardwareRequired = try await attesters(appID: query.appID).contains {
            $0.attester.status == .active && $0.attester.requiresHardware
        }
        let rules = RiskRules.effective(app: policy.rules[0], event: policy.rules[query.eventID.rawValue])
        let (device, velocity) = try await Self.deviceAndVelocity(query, deviceID: deviceID, rules: rules, in: database)
        let pending = PendingConsumption(
            query: query,
            tokenID: tokenID,
            claims: claims,
            device: device,
            velocity: velocity,
            policy: policy,
            hardwareRequired: hardwareRequired,
            decide: decide
        )
        return try await Self.batched { try await self.consumptions.submit(pending) }
    }

    /// The app's rules and lists, which every risk query applies and operators change now and then.
    func riskPolicy(appID: AppID) async throws(StoreError) -> RiskPolicy {
        try await cachedRiskPolicies.value(for: appID) { () async throws(StoreError) in
            RiskPolicy(
                rules: try await Self.riskRules(appID: appID, in: self.database),
                listEntries: try await Self.listEntries(appID: appID, in: self.database),
                events: try await Self.registeredEvents(appID: appID, in: self.database)
            )
        } ?? RiskPolicy(rules: [:], listEntries: [], events: [])
    }

    /// The device and its bounded velocity counts (`deviceAndVelocity`), prepared: every risk query with
    /// a genuine token runs it. Each count walks its index newest first (`ORDER BY` the index's time),
    /// so that `LIMIT` stops it whatever the statistics say: with rows for one subject bunched behind an
    /// attack's, a planner that expects matches spread evenly would rather scan the table, past every row
    /// of the attack. The device's columns are named, not `*`: a prepared statement whose result
    /// changes shape under it (a later migration adding a column) fails until re-prepared.
    enum DeviceAndVelocityRead: PreparedSQL {
        static let name = "gatehouse_device_and_velocity_v1"
        static let sql = """
            SELECT devices.app_id, devices.device_id, devices.client_device_id, devices.collect_type, devices.platform,
              devices.sdk_version, devices.model, devices.os_version, devices.screen, devices.idfv, devices.idfa, devices.wifi_ssid,
              devices.wifi_bssid, devices.environment, devices.first_seen, devices.last_seen, devices.last_address, devices.key_epoch,
              devices.hardware_facts, devices.hardware_attested_at, devices.attestation_failed_at,
              (SELECT count(*) FROM (SELECT 1 FROM consumed_ztokens WHERE app_id = $1 AND device_id = $2 AND consumed_at > $3 ORDER BY consumed_at DESC LIMIT $8) AS e)
                AS device_events,
              (SELECT count(*) FROM (SELECT 1 FROM velocity_edges WHERE app_id = $1 AND kind = 1 AND subject = $2 AND last_seen > $4
                AND member <> $5 ORDER BY last_seen DESC LIMIT $9) AS d) AS device_accounts,
              (SELECT count(*) FROM (SELECT 1 FROM velocity_edges WHERE app_id = $1 AND kind = 2 AND subject = $5 AND last_seen > $4
                AND member <> $2 ORDER BY last_seen DESC LIMIT $10) AS a) AS account_devices,
              (SELECT count(*) FROM (SELECT 1 FROM velocity_edges WHERE app_id = $1 AND kind = 3 AND subject = $6 AND last_seen > $7
                AND member <> $2 ORDER BY last_seen DESC LIMIT $11) AS i) AS ip_devices
            FROM (SELECT 1 AS one) AS query LEFT JOIN devices ON devices.app_id = $1 AND devices.device_id = $2
            """
    }

    /// The device and its velocity counts, in one statement, read before its token is consumed. Each
    /// count is read with `LIMIT` its threshold and the query's own token or pair added (it is not
    /// written yet): exact up to the threshold, "over it" past, at the same cost whatever an attack
    /// piled into the window. The distinct counts read `velocity_edges` (one row per pair), the
    /// events count the device's consumed tokens.
    static func deviceAndVelocity(
        _ query: RiskQuery,
        deviceID: DeviceID,
        rules: EffectiveRiskRules,
        in database: any SQLDatabase
    )
        async throws(StoreError) -> (Device?, Velocity)
    {
        let rows = try await database.query(DeviceAndVelocityRead.self, deviceAndVelocityBinds(query, deviceID: deviceID, rules: rules))
        guard let row = rows.first else { throw .corruptRow("velocity query returned nothing") }
        let velocity = Velocity(
            deviceEventsLastMinute: Int(try row.int("device_events")) + 1,
            deviceAccountsLastDay: Int(try row.int("device_accounts")) + 1,
            accountDevicesLastDay: Int(try row.int("account_devices")) + 1,
            ipDevicesLastHour: Int(try row.int("ip_devices")) + 1
        )
        return (try row.isNull("device_id") ? nil : try Self.device(row), velocity)
    }

    static func deviceAndVelocityBinds(_ query: RiskQuery, deviceID: DeviceID, rules: EffectiveRiskRules) -> [SQLValue] {
        [
            .uuid(query.appID.rawValue), .text(deviceID.rawValue), .date(query.at.addingTimeInterval(-60)),
            .date(query.at.addingTimeInterval(-86_400)), .text(query.accountID.rawValue), .text(query.clientAddress.description),
            .date(query.at.addingTimeInterval(-3_600)), .int(Int64(rules.maxDeviceEventsPerMinute)),
            .int(Int64(rules.maxDeviceAccountsPerDay)), .int(Int64(rules.maxAccountDevicesPerDay)), .int(Int64(rules.maxIPDevicesPerHour)),
        ]
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
        // A decision written behind its answer is read here once its row is in.
        await refusedDecisions.caughtUp()
        return try await database.query(
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
        await refusedDecisions.caughtUp()
        return try await database.query(
            """
            SELECT risk_decisions.*, apps.app_key FROM risk_decisions JOIN apps ON apps.app_id = risk_decisions.app_id
            WHERE ($1 = 0 OR risk_decisions.app_id = $2) AND ($3 = 0 OR event_id = $4) AND ($5 = 0 OR device_id = $6)
              AND ($7 = 0 OR account_id = $8) AND ($9 = 0 OR decision = $10)
              AND decided_at >= $11 AND decided_at < $12
              AND (decided_at < $13 OR (decided_at = $13 AND decision_id < $14))
              AND ($16 = 0 OR tags LIKE $17 ESCAPE '!') AND ($18 = 0 OR client_address = $19)
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
                flag(filter.tag != nil), .text(filter.tag.map(Self.tagPattern) ?? ""),
                flag(filter.clientAddress != nil), .text(filter.clientAddress ?? ""),
            ]
        ).map { row throws(StoreError) in
            guard let appKey = try? AppKey(validating: try row.text("app_key")) else { throw .corruptRow("app key of a decision") }
            return ListedDecision(record: try Self.decisionRecord(row), appKey: appKey)
        }
    }

    /// The tags column holds the hits as JSON; a tag's name in quotes appears only as a hit's `tag`
    /// (reasons are sentences). `_` and `!` are escaped so that they match only themselves.
    static func tagPattern(_ tag: RiskTag) -> String {
        let escaped = tag.rawValue.replacingOccurrences(of: "!", with: "!!").replacingOccurrences(of: "_", with: "!_")
            .replacingOccurrences(of: "%", with: "!%")
        return "%\"\(escaped)\"%"
    }
}
