import Foundation
import GatehouseCore

/// Risk queries: what was read for the token's device, then its consumption, judgement and decision
/// in a group commit (`consumeAndDecide`); a refused token's decision is written behind the answer;
/// and the decision log.
extension SQLDeviceRiskStore {
    public func recordRiskDecision(_ query: RiskQuery) async throws -> RecordedRiskDecision {
        let policy = try await riskPolicy(appID: query.appID)
        let rules = policy.effectiveRules(for: query.eventID)
        guard let tokenID = query.tokenID, let claims = query.claims, let deviceID = query.deviceID else {
            // Nothing to consume and no device to read (a forged, expired or mismatched token): the
            // decision (whole, or counted past the first few of its address) is the only write, and
            // nobody reads it before the answer.
            let facts = RiskFacts(consumption: nil, device: nil, velocity: nil, policy: policy, rules: rules)
            let record = RiskEngine.decide(query, facts: facts, id: UUID.random())
            recordRefused(record)
            return RecordedRiskDecision(record: record, facts: facts)
        }
        ztokenLookupCounter.wrappingIncrement(ordering: .relaxed)
        let (device, velocity) = try await Self.deviceAndVelocity(query, deviceID: deviceID, rules: rules, in: database)
        let pending = PendingConsumption(
            query: query,
            tokenID: tokenID,
            claims: claims,
            device: device,
            velocity: velocity,
            policy: policy,
            rules: rules
        )
        return try await Self.batched { try await self.consumptions.submit(pending) }
    }

    /// The app's rules, lists, events and attesters, which every risk query applies and operators
    /// change now and then (Core's `RiskPolicy` works out what they mean).
    func riskPolicy(appID: AppID) async throws(StoreError) -> RiskPolicy {
        try await cachedRiskPolicies.value(for: appID) { () async throws(StoreError) in
            let events = try await Self.registeredEvents(appID: appID, in: self.database)
            let attesters = try await self.attestation.attesters(appID: appID).map(\.attester)
            // The newest version is the policy, read whole in one statement; before the app's first
            // change there is none, and the tables are (version 0).
            var policy: RiskPolicy
            if let version = try await Self.currentVersion(appID: appID, in: self.database) {
                policy = version.document.policy(events: events, attesters: attesters, version: version.number)
            } else {
                let document = PolicyDocument(
                    rules: try await Self.riskRules(appID: appID, in: self.database),
                    lists: try await Self.listEntries(appID: appID, in: self.database),
                    policyRules: try await Self.policyRules(appID: appID, in: self.database)
                )
                policy = document.policy(events: events, attesters: attesters, version: 0)
            }
            if let shadow = try await Self.shadow(appID: appID, in: self.database) {
                let judged = shadow.document.policy(events: events, attesters: attesters, version: shadow.version ?? 0)
                policy.shadow = ShadowPolicy(policy: judged, version: shadow.version)
            }
            return policy
        } ?? .none
    }

    /// The device and its bounded velocity counts (`deviceAndVelocity`), prepared: every risk query with
    /// a genuine token runs it. Each count walks its index newest first (`ORDER BY` the index's time),
    /// so that `LIMIT` stops it whatever the statistics say: with rows for one subject bunched behind an
    /// attack's, a planner that expects matches spread evenly would rather scan the table, past every row
    /// of the attack. The device's columns are named, not `*`: a prepared statement whose result
    /// changes shape under it (a later migration adding a column) fails until re-prepared.
    enum DeviceAndVelocityRead: PreparedSQL {
        static let name = "gatehouse_device_and_velocity_v2"
        /// The statement for one query; its text is the same for every query (values only bind).
        static func statement(_ query: RiskQuery, deviceID: DeviceID, rules: EffectiveRiskRules) -> SQL {
            let (app, device, account, address) = (query.appID.rawValue, deviceID.rawValue, query.accountID.rawValue, query.clientAddress.description)
            let network = AttestationFarm.network(of: query.clientAddress)
            // The account's newest devices of the day, at most this many, are asked whether they attested that day.
            let accountDevices = 64
            let (minuteAgo, dayAgo, hourAgo) = (
                query.at.addingTimeInterval(-60), query.at.addingTimeInterval(-86_400), query.at.addingTimeInterval(-3_600)
            )
            return """
                SELECT devices.app_id, devices.device_id, devices.client_device_id, devices.collect_type, devices.platform,
                  devices.sdk_version, devices.model, devices.os_version, devices.screen, devices.idfv, devices.idfa, devices.wifi_ssid,
                  devices.wifi_bssid, devices.environment, devices.first_seen, devices.last_seen, devices.last_address, devices.key_epoch,
                  devices.hardware_facts, devices.hardware_attested_at, devices.attestation_failed_at, devices.integrity_facts, devices.integrity_at,
                  (SELECT count(*) FROM (SELECT 1 FROM consumed_ztokens WHERE app_id = \(app) AND device_id = \(device)
                    AND consumed_at > \(minuteAgo) ORDER BY consumed_at DESC LIMIT \(rules.maxDeviceEventsPerMinute)) AS e) AS device_events,
                  (SELECT count(*) FROM (SELECT 1 FROM velocity_edges WHERE app_id = \(app) AND kind = 1 AND subject = \(device)
                    AND last_seen > \(dayAgo) AND member <> \(account) ORDER BY last_seen DESC LIMIT \(rules.maxDeviceAccountsPerDay)) AS d)
                    AS device_accounts,
                  (SELECT count(*) FROM (SELECT 1 FROM velocity_edges WHERE app_id = \(app) AND kind = 2 AND subject = \(account)
                    AND last_seen > \(dayAgo) AND member <> \(device) ORDER BY last_seen DESC LIMIT \(rules.maxAccountDevicesPerDay)) AS a)
                    AS account_devices,
                  (SELECT count(*) FROM (SELECT 1 FROM velocity_edges WHERE app_id = \(app) AND kind = 3 AND subject = \(address)
                    AND last_seen > \(hourAgo) AND member <> \(device) ORDER BY last_seen DESC LIMIT \(rules.maxIPDevicesPerHour)) AS i)
                    AS ip_devices,
                  (SELECT count(*) FROM (SELECT 1 FROM attestation_edges WHERE app_id = \(app) AND kind = 1 AND subject = \(address)
                    AND last_seen > \(hourAgo) ORDER BY last_seen DESC LIMIT \(rules.maxAddressAttestationsPerHour + 1)) AS aa) AS address_attestations,
                  (SELECT count(*) FROM (SELECT 1 FROM attestation_edges WHERE app_id = \(app) AND kind = 2 AND subject = \(network)
                    AND last_seen > \(hourAgo) ORDER BY last_seen DESC LIMIT \(rules.maxNetworkAttestationsPerHour + 1)) AS na) AS network_attestations,
                  (SELECT count(*) FROM (SELECT 1 FROM (SELECT member FROM velocity_edges WHERE app_id = \(app) AND kind = 2 AND subject = \(account)
                    AND last_seen > \(dayAgo) ORDER BY last_seen DESC LIMIT \(accountDevices)) AS m
                    JOIN devices AS attested ON attested.app_id = \(app) AND attested.device_id = m.member
                    WHERE attested.hardware_attested_at > \(dayAgo) OR attested.integrity_at > \(dayAgo)
                    LIMIT \(rules.maxAccountAttestationsPerDay + 1)) AS ac) AS account_attestations
                FROM (SELECT 1 AS one) AS query LEFT JOIN devices ON devices.app_id = \(app) AND devices.device_id = \(device)
                """
        }
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
        let rows = try await database.query(DeviceAndVelocityRead.self, DeviceAndVelocityRead.statement(query, deviceID: deviceID, rules: rules))
        guard let row = rows.first else { throw .corruptRow("velocity query returned nothing") }
        var velocity = Velocity(
            deviceEventsLastMinute: Int(try row.int("device_events")) + 1,
            deviceAccountsLastDay: Int(try row.int("device_accounts")) + 1,
            accountDevicesLastDay: Int(try row.int("account_devices")) + 1,
            ipDevicesLastHour: Int(try row.int("ip_devices")) + 1
        )
        velocity.attestations = AttestationCounts(
            addressLastHour: Int(try row.int("address_attestations")),
            networkLastHour: Int(try row.int("network_attestations")),
            accountLastDay: Int(try row.int("account_attestations"))
        )
        return (try row.isNull("device_id") ? nil : try Self.device(row), velocity)
    }

    static func insertDecisions(_ records: [RiskDecisionRecord], in database: any SQLDatabase) async throws(StoreError) {
        let encoder = JSONEncoder()
        var rows: [SQL] = []
        rows.reserveCapacity(records.count)
        for record in records {
            guard let tags = try? encoder.encode(record.verdict.tags) else { throw .corruptRow("tags do not encode") }
            // Most decisions no rule touched: no outcomes, no column written.
            var outcomes: String?
            if !record.verdict.rules.isEmpty {
                guard let encoded = try? encoder.encode(record.verdict.rules) else { throw .corruptRow("rule outcomes do not encode") }
                outcomes = String(decoding: encoded, as: UTF8.self)
            }
            rows.append(
                """
                (\(record.appID.rawValue), \(record.id), \(record.decidedAt), \(record.eventID.rawValue), \(record.accountID.rawValue),
                 \(record.deviceID?.rawValue), \(record.tokenID), \(record.tokenState.rawValue), \(record.clientAddress), \(record.userAgent),
                 \(record.pageURL), \(record.verdict.score), \(record.verdict.decision.rawValue), \(String(decoding: tags, as: UTF8.self)),
                 \(outcomes), \(Int64(record.policyVersion)), \(record.facts.map { SQLValue.bytes($0.encoded()) } ?? .null),
                 \(record.shadow?.text))
                """
            )
        }
        try await database.query(
            """
            INSERT INTO risk_decisions (app_id, decision_id, decided_at, event_id, account_id, device_id, token_id, token_state,
                                        client_address, user_agent, page_url, score, decision, tags, rule_outcomes, policy_version, facts,
                                        shadow_outcome)
            VALUES \(SQL.joined(rows, separator: ", "))
            """
        )
    }

    public func decision(appID: AppID, id: UUID) async throws(StoreError) -> RiskDecisionRecord? {
        // A decision written behind its answer is read here once its row is in.
        await refusedDecisions.caughtUp()
        return try await database.query(
            "SELECT * FROM risk_decisions WHERE app_id = \(.uuid(appID.rawValue)) AND decision_id = \(.uuid(id))"
        ).first.map(Self.decisionRecord)
    }

    public func decisions(
        matching filter: DecisionFilter,
        after cursor: DecisionCursor?,
        limit: Int
    ) async throws(StoreError)
        -> [ListedDecision]
    {
        // One static statement, its optional filters as `ListingFilter` says.
        let (anyUUID, farPast, farFuture) = (ListingFilter.anyUUID, ListingFilter.farPast, ListingFilter.farFuture)
        let flag = ListingFilter.flag
        await refusedDecisions.caughtUp()
        return try await database.query(
            """
            SELECT risk_decisions.*, apps.app_key FROM risk_decisions JOIN apps ON apps.app_id = risk_decisions.app_id
            WHERE (\(flag(filter.appID != nil)) = 0 OR risk_decisions.app_id = \(.uuid(filter.appID?.rawValue ?? anyUUID))) AND
              (\(flag(filter.eventID != nil)) = 0 OR event_id = \(.int(Int64(filter.eventID?.rawValue ?? 0)))) AND (\(flag(filter.deviceID != nil))
              = 0 OR device_id = \(.text(filter.deviceID?.rawValue ?? "")))
              AND (\(flag(filter.accountID != nil)) = 0 OR account_id = \(.text(filter.accountID?.rawValue ?? ""))) AND
                (\(flag(filter.decision != nil)) = 0 OR decision = \(.text(filter.decision?.rawValue ?? "")))
              AND decided_at >= \(.date(filter.from ?? farPast)) AND decided_at < \(.date(filter.to ?? farFuture))
              AND (decided_at < \(.date(cursor?.decidedAt ?? farFuture)) OR (decided_at = \(.date(cursor?.decidedAt ?? farFuture)) AND decision_id <
                \(.uuid(cursor?.id ?? anyUUID))))
              AND (\(flag(filter.tag != nil)) = 0 OR tags LIKE \(.text(filter.tag.map(Self.tagPattern) ?? "")) ESCAPE '!') AND
                (\(flag(filter.clientAddress != nil)) = 0 OR client_address = \(.text(filter.clientAddress ?? "")))
              AND (\(flag(filter.label != nil)) = 0 OR label = \(.text(filter.label?.rawValue ?? "")))
            ORDER BY decided_at DESC, decision_id DESC
            LIMIT \(.int(Int64(limit)))
            """
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
