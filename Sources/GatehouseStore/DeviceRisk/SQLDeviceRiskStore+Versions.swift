import Foundation
import GatehouseCore

/// Policy versions: every change to an app's rules, lists or policy rules publishes the whole policy
/// as the next version in the change's own transaction (`publishing`), the risk queries judge with
/// the newest, and a restore writes an earlier one back as the next.
extension SQLDeviceRiskStore {
    /// A policy change and its audit entry, with the version it publishes, in one transaction.
    func publishing(_ appID: AppID, _ audit: AuditEntry, _ body: @escaping @Sendable (any SQLDatabase) async throws -> Void) async throws(StoreError)
    {
        try await changing(audit) { transaction in
            try await body(transaction)
            try await Self.publish(appID: appID, change: audit.action, by: audit.actor.description, at: audit.occurredAt, in: transaction)
        }
    }

    /// Writes the policy as the tables now hold it as the next version. The app row's lock orders two
    /// instances' changes, so each version holds every change committed before it.
    static func publish(appID: AppID, change: String, by actor: String, at now: Date, in transaction: any SQLDatabase) async throws(StoreError) {
        try await transaction.query("UPDATE apps SET updated_at = updated_at WHERE app_id = \(appID.rawValue)")
        let document = PolicyDocument(
            rules: try await riskRules(appID: appID, in: transaction),
            lists: try await listEntries(appID: appID, in: transaction),
            policyRules: try await policyRules(appID: appID, in: transaction)
        )
        try await transaction.query(
            """
            INSERT INTO policy_versions (app_id, version, published_at, published_by, change, document)
            SELECT \(appID.rawValue), COALESCE(max(version), 0) + 1, \(now), \(actor), \(change), \(document.storedJSON())
            FROM policy_versions WHERE app_id = \(appID.rawValue)
            """
        )
    }

    /// The newest version, nil before the app's first change.
    static func currentVersion(appID: AppID, in database: any SQLDatabase) async throws(StoreError) -> PolicyVersion? {
        try await database.query(
            "SELECT * FROM policy_versions WHERE app_id = \(appID.rawValue) ORDER BY version DESC LIMIT 1"
        ).first.map { row throws(StoreError) in try Self.policyVersion(row, appID: appID) }
    }

    public func policyVersions(appID: AppID, before: Int?, limit: Int) async throws(StoreError) -> [PolicyVersion] {
        try await database.query(
            """
            SELECT * FROM policy_versions WHERE app_id = \(appID.rawValue) AND version < \(Int64(before ?? Int(Int32.max)))
            ORDER BY version DESC LIMIT \(Int64(limit))
            """
        ).map { row throws(StoreError) in try Self.policyVersion(row, appID: appID) }
    }

    public func policyVersion(appID: AppID, number: Int) async throws(StoreError) -> PolicyVersion? {
        try await database.query(
            "SELECT * FROM policy_versions WHERE app_id = \(appID.rawValue) AND version = \(Int64(number))"
        ).first.map { row throws(StoreError) in try Self.policyVersion(row, appID: appID) }
    }

    /// Writes version `number`'s rules, lists and policy rules back over the app's, publishing them as
    /// the next version; `.notFound` when the app has no such version. Returns the new version.
    public func restorePolicyVersion(appID: AppID, number: Int, at now: Date, audit: AuditEntry) async throws(StoreError) -> PolicyVersion {
        try await publishing(appID, audit) { transaction in
            guard
                let row = try await transaction.query(
                    "SELECT * FROM policy_versions WHERE app_id = \(appID.rawValue) AND version = \(Int64(number))"
                ).first
            else { throw StoreError.notFound("no policy version \(number)") }
            let document = try Self.policyVersion(row, appID: appID).document
            try await transaction.query("DELETE FROM risk_rules WHERE app_id = \(appID.rawValue)")
            for (scope, rules) in document.rules { try await Self.writeRules(rules, appID: appID, scope: scope, at: now, in: transaction) }
            try await transaction.query("DELETE FROM risk_lists WHERE app_id = \(appID.rawValue)")
            for entry in document.lists { try await Self.insert(entry, in: transaction) }
            try await transaction.query("DELETE FROM policy_rules WHERE app_id = \(appID.rawValue)")
            for rule in document.policyRules { try await Self.upsert(rule, appID: appID, at: now, in: transaction) }
        }
        guard let restored = try await Self.currentVersion(appID: appID, in: database) else { throw .notFound("no policy version") }
        return restored
    }

    static func policyVersion(_ row: SQLRow, appID: AppID) throws(StoreError) -> PolicyVersion {
        guard let document = PolicyDocument(storedJSON: try row.text("document"), appID: appID) else { throw .corruptRow("policy version document") }
        return PolicyVersion(
            number: Int(try row.int("version")),
            publishedAt: try row.date("published_at"),
            publishedBy: try row.text("published_by"),
            change: try row.text("change"),
            document: document
        )
    }
}
