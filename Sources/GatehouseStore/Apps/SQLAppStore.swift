import Foundation
import GatehouseCore

/// Apps, their sealed secrets and registered events; this instance's copy of each app with its secrets,
/// which every authenticated SDK and backend call reads.
public final class SQLAppStore: CapabilityStore {
    let database: any SQLDatabase
    let changes: StoreChanges
    let cachedApps: ReadThroughCache<AppKey, (app: App, secrets: [SealedSecret])>

    init(database: any SQLDatabase, changes: StoreChanges) {
        self.database = database
        self.changes = changes
        cachedApps = ReadThroughCache(lifetime: SQLStore.cacheLifetime, changes: changes)
    }
}

extension SQLAppStore: AppStore {
    public func createApp(_ app: App, secrets: [SealedSecret], audit: AuditEntry) async throws(StoreError) {
        try await changing(audit) { transaction in
            try await transaction.query(
                """
                INSERT INTO apps (app_id, app_key, name, platforms, status, created_at, updated_at, ztoken_ttl_seconds, retention_days)
                VALUES (\(.uuid(app.id.rawValue)), \(.text(app.appKey.rawValue)), \(.text(app.name)),
                  \(.text(app.platforms.map(\.rawValue).joined(separator: ","))), \(.text(app.status.rawValue)), \(.date(app.createdAt)),
                  \(.date(app.updatedAt)), \(.int(Int64(app.settings.ztokenTTLSeconds))), \(.int(Int64(app.settings.retentionDays))))
                """
            )
            for secret in secrets {
                try await Self.insertSecret(secret, in: transaction)
            }
        }
    }

    public func app(withKey appKey: AppKey) async throws(StoreError) -> App? {
        try await database.query("SELECT * FROM apps WHERE app_key = \(.text(appKey.rawValue))").first.map(Self.app)
    }

    public func listApps(after: AppKey?, limit: Int) async throws(StoreError) -> [App] {
        try await database.query(
            "SELECT * FROM apps WHERE app_key > \(.text(after?.rawValue ?? "")) ORDER BY app_key LIMIT \(.int(Int64(limit)))"
        ).map(Self.app)
    }

    public func changeStatus(of app: App, from: AppStatus, to updated: App, audit: AuditEntry) async throws(StoreError) {
        try await changing(audit) { transaction in
            let rows = try await transaction.query(
                """
                UPDATE apps SET status = \(.text(updated.status.rawValue)), updated_at = \(.date(updated.updatedAt)) WHERE app_id =
                  \(.uuid(app.id.rawValue)) AND status = \(.text(from.rawValue)) RETURNING app_id
                """
            )
            guard !rows.isEmpty else { throw StoreError.conflict("app \(app.appKey) changed concurrently") }
        }
    }

    public func secrets(of appID: AppID) async throws(StoreError) -> [SealedSecret] {
        try await database.query(
            """
            SELECT app_id, kind AS secret_kind, version AS secret_version, sealed AS secret_sealed, verifier AS secret_verifier,
              created_at AS secret_created_at, retires_at AS secret_retires_at
            FROM app_secrets WHERE app_id = \(.uuid(appID.rawValue)) ORDER BY kind, version
            """
        ).map(Self.secret)
    }

    /// The app and its secrets in one round trip: every authenticated SDK and backend call needs both.
    public func appWithSecrets(withKey appKey: AppKey) async throws(StoreError) -> (app: App, secrets: [SealedSecret])? {
        try await cachedApps.value(for: appKey) { () async throws(StoreError) in try await self.readAppWithSecrets(withKey: appKey) }
    }

    public func appWithSecretsInMemory(withKey appKey: AppKey) -> (app: App, secrets: [SealedSecret])? {
        cachedApps.freshValue(for: appKey)
    }

    private func readAppWithSecrets(withKey appKey: AppKey) async throws(StoreError) -> (app: App, secrets: [SealedSecret])? {
        let rows = try await database.query(
            """
            SELECT apps.*, app_secrets.kind AS secret_kind, app_secrets.version AS secret_version,
              app_secrets.sealed AS secret_sealed, app_secrets.verifier AS secret_verifier, app_secrets.created_at AS secret_created_at,
              app_secrets.retires_at AS secret_retires_at
            FROM apps LEFT JOIN app_secrets ON app_secrets.app_id = apps.app_id
            WHERE apps.app_key = \(.text(appKey.rawValue)) ORDER BY app_secrets.kind, app_secrets.version
            """
        )
        guard let first = rows.first else { return nil }
        var secrets: [SealedSecret] = []
        for row in rows where try !row.isNull("secret_kind") { secrets.append(try Self.secret(row)) }
        return (try Self.app(first), secrets)
    }

    static func secret(_ row: SQLRow) throws(StoreError) -> SealedSecret {
        guard let kind = SecretKind(rawValue: try row.text("secret_kind")) else { throw .corruptRow("unknown secret kind") }
        return SealedSecret(
            appID: AppID(try row.uuid("app_id")),
            kind: kind,
            version: Int(try row.int("secret_version")),
            sealed: try row.bytes("secret_sealed"),
            verifier: try row.isNull("secret_verifier") ? nil : try row.bytes("secret_verifier"),
            createdAt: try row.date("secret_created_at"),
            retiresAt: try row.optionalDate("secret_retires_at")
        )
    }

    public func rotateSecret(_ secret: SealedSecret, retirements: [Int: Date], audit: AuditEntry) async throws(StoreError) {
        try await changing(audit) { transaction in
            try await Self.insertSecret(secret, in: transaction)
            for (version, retiresAt) in retirements {
                try await transaction.query(
                    """
                    UPDATE app_secrets SET retires_at = \(.date(retiresAt)) WHERE app_id = \(.uuid(secret.appID.rawValue)) AND kind =
                      \(.text(secret.kind.rawValue)) AND version = \(.int(Int64(version)))
                    """
                )
            }
        }
    }

    public func registerEvent(_ event: RegisteredEvent, audit: AuditEntry) async throws(StoreError) {
        try await changing(audit) { transaction in
            try await transaction.query(
                """
                INSERT INTO app_events (app_id, event_id, name, created_at) VALUES (\(.uuid(event.appID.rawValue)),
                  \(.int(Int64(event.eventID.rawValue))), \(.text(event.name)), \(.date(event.createdAt)))
                """
            )
        }
    }

    public func events(of appID: AppID) async throws(StoreError) -> [RegisteredEvent] {
        try await database.query(
            "SELECT * FROM app_events WHERE app_id = \(.uuid(appID.rawValue)) ORDER BY event_id"
        ).map { row throws(StoreError) in
            guard let eventID = try? EventID(validating: Int(try row.int("event_id"))) else {
                throw .corruptRow("event id out of range")
            }
            return RegisteredEvent(
                appID: AppID(try row.uuid("app_id")),
                eventID: eventID,
                name: try row.text("name"),
                createdAt: try row.date("created_at")
            )
        }
    }

    static func insertSecret(_ secret: SealedSecret, in transaction: any SQLDatabase) async throws(StoreError) {
        try await transaction.query(
            """
            INSERT INTO app_secrets (app_id, kind, version, sealed, verifier, created_at, retires_at) VALUES (\(.uuid(secret.appID.rawValue)),
              \(.text(secret.kind.rawValue)), \(.int(Int64(secret.version))), \(.bytes(secret.sealed)),
              \(secret.verifier.map(SQLValue.bytes) ?? .null), \(.date(secret.createdAt)), \(.optional(secret.retiresAt)))
            """
        )
    }

    static func app(_ row: SQLRow) throws(StoreError) -> App {
        guard let appKey = try? AppKey(validating: try row.text("app_key")),
            let status = AppStatus(rawValue: try row.text("status"))
        else { throw .corruptRow("app row has an invalid appKey or status") }
        let platforms = try row.text("platforms").split(separator: ",").compactMap { Platform(rawValue: String($0)) }
        return App(
            id: AppID(try row.uuid("app_id")),
            appKey: appKey,
            name: try row.text("name"),
            platforms: platforms,
            status: status,
            settings: AppSettings(
                ztokenTTLSeconds: Int(try row.int("ztoken_ttl_seconds")),
                retentionDays: Int(try row.int("retention_days"))
            ),
            createdAt: try row.date("created_at"),
            updatedAt: try row.date("updated_at")
        )
    }
}
