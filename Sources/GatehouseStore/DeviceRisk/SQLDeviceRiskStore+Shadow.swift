import Foundation
import GatehouseCore

/// The app's shadow policy: set or replaced, read with the live policy into each instance's copy,
/// stopped. A change to it is a change to what the risk queries compute, so every copy is renewed.
extension SQLDeviceRiskStore {
    public func setShadow(_ shadow: PolicyShadow, appID: AppID, audit: AuditEntry) async throws(StoreError) {
        let version: SQLValue = shadow.version.map { .int(Int64($0)) } ?? .null
        try await changing(audit) { transaction in
            try await transaction.query(
                """
                INSERT INTO policy_shadows (app_id, document, version, started_at, started_by)
                VALUES (\(appID.rawValue), \(shadow.document.storedJSON()), \(version), \(shadow.startedAt), \(shadow.startedBy))
                ON CONFLICT (app_id) DO UPDATE SET document = excluded.document, version = excluded.version,
                  started_at = excluded.started_at, started_by = excluded.started_by
                """
            )
        }
    }

    public func shadow(appID: AppID) async throws(StoreError) -> PolicyShadow? {
        try await Self.shadow(appID: appID, in: database)
    }

    static func shadow(appID: AppID, in database: any SQLDatabase) async throws(StoreError) -> PolicyShadow? {
        guard let row = try await database.query("SELECT * FROM policy_shadows WHERE app_id = \(appID.rawValue)").first else { return nil }
        guard let document = PolicyDocument(storedJSON: try row.text("document"), appID: appID) else { throw .corruptRow("shadow policy") }
        return PolicyShadow(
            document: document,
            version: try row.optionalInt("version").map(Int.init),
            startedAt: try row.date("started_at"),
            startedBy: try row.text("started_by")
        )
    }

    /// `.notFound` when the app runs no shadow.
    public func removeShadow(appID: AppID, audit: AuditEntry) async throws(StoreError) {
        try await changing(audit) { transaction in
            let removed = try await transaction.query("DELETE FROM policy_shadows WHERE app_id = \(appID.rawValue) RETURNING app_id")
            guard !removed.isEmpty else { throw StoreError.notFound("no shadow policy") }
        }
    }
}
