import Foundation
import GatehouseCore

/// The fraud team's rules, as written: the policy the risk queries apply reads them with the rest
/// (`riskPolicy`), parsed once per read of the instance's copy.
extension SQLDeviceRiskStore {
    public func policyRules(appID: AppID) async throws(StoreError) -> [PolicyRule] {
        try await Self.policyRules(appID: appID, in: database)
    }

    static func policyRules(appID: AppID, in database: any SQLDatabase) async throws(StoreError) -> [PolicyRule] {
        try await database.query("SELECT * FROM policy_rules WHERE app_id = \(appID.rawValue) ORDER BY name").map(Self.policyRule)
    }

    /// Creates or replaces the rule of that name; `.conflict` when it would be one more than
    /// `PolicyRule.maximumPerApp`. The count is taken under the app row's lock: under PostgreSQL's read
    /// committed, two writes that only counted could both see 199 and both insert.
    public func putPolicyRule(_ rule: PolicyRule, appID: AppID, at now: Date, audit: AuditEntry) async throws(StoreError) {
        try await publishing(appID, audit) { transaction in
            // A no-op update that takes the app row's lock until commit (SQLite has one writer anyway).
            try await transaction.query("UPDATE apps SET updated_at = updated_at WHERE app_id = \(appID.rawValue)")
            let existing = try await transaction.query(
                "SELECT count(*) AS rules, sum(CASE WHEN name = \(rule.name) THEN 1 ELSE 0 END) AS same FROM policy_rules WHERE app_id = \(appID.rawValue)"
            ).first
            if let existing, try existing.int("rules") >= PolicyRule.maximumPerApp, (try existing.optionalInt("same") ?? 0) == 0 {
                throw StoreError.conflict("an app has at most \(PolicyRule.maximumPerApp) rules")
            }
            try await Self.upsert(rule, appID: appID, at: now, in: transaction)
        }
    }

    static func upsert(_ rule: PolicyRule, appID: AppID, at now: Date, in transaction: any SQLDatabase) async throws(StoreError) {
        let effect = try Self.effectJSON(rule.then)
        let event: SQLValue = rule.eventID.map { .int(Int64($0.rawValue)) } ?? .null
        try await transaction.query(
            """
            INSERT INTO policy_rules (app_id, name, event_id, expression, effect, mode, created_at, updated_at)
            VALUES (\(appID.rawValue), \(rule.name), \(event), \(rule.when), \(effect), \(rule.mode.rawValue),
              \(now), \(now))
            ON CONFLICT (app_id, name) DO UPDATE SET event_id = excluded.event_id, expression = excluded.expression,
              effect = excluded.effect, mode = excluded.mode, updated_at = excluded.updated_at
            """
        )
    }

    /// `.notFound` if the app has no rule of that name.
    public func removePolicyRule(appID: AppID, name: String, audit: AuditEntry) async throws(StoreError) {
        try await publishing(appID, audit) { transaction in
            let removed = try await transaction.query("DELETE FROM policy_rules WHERE app_id = \(appID.rawValue) AND name = \(name) RETURNING name")
            guard !removed.isEmpty else { throw StoreError.notFound("rule \(name)") }
        }
    }

    static func effectJSON(_ effect: PolicyRule.Effect) throws(StoreError) -> String {
        let json: JSONValue =
            switch effect {
            case .tag(let tag, let weight): .object(["tag": .string(tag), "weight": .integer(Int64(weight))])
            case .decide(let decision): .object(["decide": .string(decision.rawValue)])
            }
        guard let data = try? JSONEncoder().encode(json) else { throw .corruptRow("rule effect does not encode") }
        return String(decoding: data, as: UTF8.self)
    }

    static func policyRule(_ row: SQLRow) throws(StoreError) -> PolicyRule {
        guard let effect = JSONValue.parse(Array(try row.text("effect").utf8))?.object, let mode = PolicyRule.Mode(rawValue: try row.text("mode"))
        else { throw .corruptRow("policy rule") }
        let then: PolicyRule.Effect
        if let tag = effect["tag"]?.string, let weight = effect["weight"]?.integer {
            then = .tag(tag, weight: Int(weight))
        } else if let decided = effect["decide"]?.string.flatMap(RiskDecision.init(rawValue:)) {
            then = .decide(decided)
        } else {
            throw .corruptRow("policy rule effect")
        }
        let eventID = try row.optionalInt("event_id").flatMap { try? EventID(validating: Int($0)) }
        return PolicyRule(name: try row.text("name"), when: try row.text("expression"), then: then, mode: mode, eventID: eventID)
    }
}
