import Foundation
import GatehouseCore

/// Risk queries: a fresh token's read, consumption, judgement and decision in a group commit
/// (`consumeAndDecide`); a refused token's decision is written behind the answer; and the decision log.
extension SQLDeviceRiskStore {
    public func recordRiskDecision(_ query: RiskQuery) async throws -> RecordedRiskDecision {
        let policy = try await riskPolicy(appID: query.appID)
        guard let tokenID = query.tokenID, let claims = query.claims, query.deviceID != nil else {
            return recordRefusedDecision(query, policy: policy)
        }
        let rules = policy.effectiveRules(for: query.eventID)
        ztokenLookupCounter.wrappingIncrement(ordering: .relaxed)
        let pending = PendingConsumption(query: query, tokenID: tokenID, claims: claims, policy: policy, rules: rules)
        return try await Self.batched { try await self.consumptions.submit(pending) }
    }

    /// A query whose token was refused before any read (forged, expired, another app's, event's or
    /// account's): nothing to consume and no device to read, so the decision (whole, or counted past the
    /// first few of its address) is the only write, behind the answer, which nobody reads it before.
    public func recordRefusedDecision(_ query: RiskQuery, policy: RiskPolicy) -> RecordedRiskDecision {
        let facts = RiskFacts(consumption: nil, device: nil, velocity: nil, policy: policy, rules: policy.effectiveRules(for: query.eventID))
        let record = RiskEngine.decide(query, facts: facts, id: UUID.random())
        recordRefused(record)
        return RecordedRiskDecision(record: record, facts: facts)
    }

    public func riskPolicyInMemory(appID: AppID) -> RiskPolicy? {
        cachedRiskPolicies.freshValue(for: appID)
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

    /// The decisions' `INSERT` on PostgreSQL: one text for any number of rows, so it is parsed and
    /// planned once per connection.
    enum DecisionInsert: PreparedSQL {
        static let name = "gatehouse_decision_insert_v1"
    }

    static let decisionColumnNames = [
        "app_id", "decision_id", "decided_at", "event_id", "account_id", "device_id", "token_id", "token_state", "client_address", "user_agent",
        "page_url", "score", "decision", "tags", "rule_outcomes", "policy_version", "facts", "shadow_outcome",
    ]

    static let decisionColumns: SQL = "risk_decisions (\(columns: decisionColumnNames))"

    /// PostgreSQL gets each column as one array (`unnest`), its optional ones with NULL elements;
    /// SQLite, which binds no arrays, rows of values.
    static func insertDecisions(_ records: [RiskDecisionRecord], in database: any SQLDatabase) async throws(StoreError) {
        guard !records.isEmpty else { return }
        let outcomes = try ruleOutcomes(records)
        switch database.dialect {
        case .postgres:
            try await database.query(
                DecisionInsert.self,
                "INSERT INTO \(decisionColumns) SELECT * FROM unnest(\(postgresDecisionArrays(records, outcomes: outcomes)))"
            )
        case .sqlite:
            let rows = zip(records, outcomes).map { record, outcomes -> SQL in
                """
                (\(record.appID.rawValue), \(record.id), \(record.decidedAt), \(record.eventID.rawValue), \(record.accountID.rawValue),
                 \(record.deviceID?.rawValue), \(record.tokenID), \(record.tokenState.rawValue), \(record.clientAddress), \(record.userAgent),
                 \(record.pageURL), \(record.verdict.score), \(record.verdict.decision.rawValue), \(tagsJSON(record.verdict.tags)),
                 \(outcomes), \(Int64(record.policyVersion)), \(record.facts.map { SQLValue.bytes($0.encoded()) } ?? .null),
                 \(record.shadow?.text))
                """
            }
            try await database.query("INSERT INTO \(decisionColumns) VALUES \(SQL.joined(rows, separator: ", "))")
        }
    }

    /// Each decision's rule outcomes as JSON; most decisions no rule touched: no outcomes, no column written.
    static func ruleOutcomes(_ records: [RiskDecisionRecord]) throws(StoreError) -> [String?] {
        let encoder = JSONEncoder()
        return try records.map { record throws(StoreError) -> String? in
            guard !record.verdict.rules.isEmpty else { return nil }
            guard let encoded = try? encoder.encode(record.verdict.rules) else { throw .corruptRow("rule outcomes do not encode") }
            return String(decoding: encoded, as: UTF8.self)
        }
    }

    /// The decisions as one array per column, in `decisionColumnNames`' order, for `unnest`.
    static func postgresDecisionArrays(_ records: [RiskDecisionRecord], outcomes: [String?]) -> SQL {
        """
        \(.uuids(records.map(\.appID.rawValue)))::uuid[], \(.uuids(records.map(\.id)))::uuid[],
            \(.dates(records.map(\.decidedAt)))::timestamptz[], \(.ints(records.map { Int64($0.eventID.rawValue) }))::int8[],
            \(.texts(records.map(\.accountID.rawValue)))::text[], \(.optionalTexts(records.map { $0.deviceID?.rawValue }))::text[],
            \(.optionalTexts(records.map(\.tokenID)))::text[], \(.texts(records.map(\.tokenState.rawValue)))::text[],
            \(.optionalTexts(records.map(\.clientAddress)))::text[], \(.optionalTexts(records.map(\.userAgent)))::text[],
            \(.optionalTexts(records.map(\.pageURL)))::text[], \(.ints(records.map { Int64($0.verdict.score) }))::int8[],
            \(.texts(records.map(\.verdict.decision.rawValue)))::text[], \(.texts(records.map { tagsJSON($0.verdict.tags) }))::text[],
            \(.optionalTexts(outcomes))::text[], \(.ints(records.map { Int64($0.policyVersion) }))::int8[],
            \(.optionalBytes(records.map { $0.facts?.encoded() }))::bytea[], \(.optionalTexts(records.map { $0.shadow?.text }))::text[]
        """
    }

    /// The tags column: the hits as a JSON array, written by hand as every decision has one
    /// (Foundation's encoder was 2% of a risk query's server CPU).
    static func tagsJSON(_ tags: [TagHit]) -> String {
        var writer = JSONWriter(capacity: 64 + 96 * tags.count)
        writer.tagHits(tags)
        return String(decoding: writer.bytes, as: UTF8.self)
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
