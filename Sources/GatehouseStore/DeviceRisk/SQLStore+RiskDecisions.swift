import Foundation
import GatehouseCore

/// Risk queries: one transaction that consumes the ztoken, reads the device's facts and stores the
/// decision Core made from them; and the decision log.
extension SQLStore {
    public func recordRiskDecision(
        _ query: RiskQuery,
        decide: @escaping @Sendable (RiskFacts) throws -> RiskDecisionRecord
    ) async throws -> RecordedRiskDecision {
        let policy = try await riskPolicy(appID: query.appID)
        guard let tokenID = query.tokenID else {
            // Nothing to consume and no device to read (a forged, expired or mismatched token): the
            // decision row is the only write, so it joins a group commit instead of a transaction.
            let facts = RiskFacts(consumption: nil, device: nil, velocity: nil, policy: policy, eventID: query.eventID)
            let record = try decide(facts)
            try await Self.batched { try await self.decisionWrites.submit(record) }
            return RecordedRiskDecision(record: record, facts: facts)
        }
        ztokenLookupCounter.wrappingIncrement(ordering: .relaxed)
        // Only a query with a device can be tagged attestation.missing; the attesters are the
        // instance's copy (a refused token never asks).
        let hardwareRequired = try await attesters(appID: query.appID).contains {
            $0.attester.status == .active && $0.attester.requiresHardware
        }
        do {
            return try await database.transaction { transaction in
                let consumption = try await Self.consume(tokenID, query, in: transaction)
                var device: Device?
                var velocity: Velocity?
                if let deviceID = query.deviceID {
                    if case .consumed = consumption { try await Self.upsertVelocityEdges(query, deviceID: deviceID, in: transaction) }
                    device = try await Self.device(appID: query.appID, id: deviceID, in: transaction)
                    let rules = RiskRules.effective(app: policy.rules[0], event: policy.rules[query.eventID.rawValue])
                    velocity = try await Self.velocity(query, deviceID: deviceID, rules: rules, in: transaction)
                }
                let facts = RiskFacts(
                    consumption: consumption,
                    device: device,
                    velocity: velocity,
                    policy: policy,
                    eventID: query.eventID,
                    hardwareRequired: hardwareRequired
                )
                let record = try decide(facts)
                try await Self.insertDecisions([record], in: transaction)
                return RecordedRiskDecision(record: record, facts: facts)
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
                listEntries: try await Self.listEntries(appID: appID, in: self.database),
                events: try await Self.registeredEvents(appID: appID, in: self.database)
            )
        } ?? RiskPolicy(rules: [:], listEntries: [], events: [])
    }

    /// The atomic step: the first query to record the token's id wins (its primary key); later ones,
    /// here or on another instance, find it recorded. The id is kept as long as the token could live.
    static func consume(
        _ tokenID: String,
        _ query: RiskQuery,
        in transaction: any SQLDatabase
    ) async throws(StoreError)
        -> RiskFacts.Consumption
    {
        guard let claims = query.claims else { throw .corruptRow("a token to consume without claims") }
        let recorded = try await transaction.query(
            """
            INSERT INTO consumed_ztokens (app_id, token_id, device_id, consumed_at, expires_at) VALUES ($1, $2, $3, $4, $5)
            ON CONFLICT (app_id, token_id) DO NOTHING RETURNING token_id
            """,
            [.uuid(query.appID.rawValue), .text(tokenID), .text(claims.deviceID.rawValue), .date(query.at), .date(claims.consumptionKeptUntil)]
        )
        guard !recorded.isEmpty else { return .alreadyConsumed }
        guard claims.fromPage else { return .consumed(pageURL: nil) }
        let page = try await transaction.query(
            "SELECT page_url FROM ztoken_pages WHERE app_id = $1 AND token_id = $2",
            [.uuid(query.appID.rawValue), .text(tokenID)]
        )
        return .consumed(pageURL: try page.first?.optionalText("page_url"))
    }

    /// The velocity counts, each read with `LIMIT` its threshold + 1: exact up to the threshold, and
    /// "over it" past, at the same cost whatever an attack piled into the window. The distinct counts
    /// read `velocity_edges` (one row per pair), the events count the device's consumed tokens.
    static func velocity(
        _ query: RiskQuery,
        deviceID: DeviceID,
        rules: EffectiveRiskRules,
        in transaction: any SQLDatabase
    )
        async throws(StoreError) -> Velocity
    {
        let rows = try await transaction.query(
            """
            SELECT
              (SELECT count(*) FROM (SELECT 1 FROM consumed_ztokens WHERE app_id = $1 AND device_id = $2 AND consumed_at > $3 LIMIT $8) AS e)
                AS device_events,
              (SELECT count(*) FROM (SELECT 1 FROM velocity_edges WHERE app_id = $1 AND kind = 1 AND subject = $2 AND last_seen > $4
                LIMIT $9) AS d) AS device_accounts,
              (SELECT count(*) FROM (SELECT 1 FROM velocity_edges WHERE app_id = $1 AND kind = 2 AND subject = $5 AND last_seen > $4
                LIMIT $10) AS a) AS account_devices,
              (SELECT count(*) FROM (SELECT 1 FROM velocity_edges WHERE app_id = $1 AND kind = 3 AND subject = $6 AND last_seen > $7
                LIMIT $11) AS i) AS ip_devices
            """,
            [
                .uuid(query.appID.rawValue), .text(deviceID.rawValue), .date(query.at.addingTimeInterval(-60)),
                .date(query.at.addingTimeInterval(-86_400)), .text(query.accountID.rawValue), .text(query.clientAddress.description),
                .date(query.at.addingTimeInterval(-3_600)), .int(Int64(rules.maxDeviceEventsPerMinute) + 1),
                .int(Int64(rules.maxDeviceAccountsPerDay) + 1), .int(Int64(rules.maxAccountDevicesPerDay) + 1),
                .int(Int64(rules.maxIPDevicesPerHour) + 1),
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
}
