import Foundation
import GatehouseCore

/// The operators' admin tokens, the audit log they read back, and the sealed values a master key
/// rotation re-seals.
public final class SQLAdminStore: CapabilityStore {
    let database: any SQLDatabase
    let changes: StoreChanges

    init(database: any SQLDatabase, changes: StoreChanges) {
        self.database = database
        self.changes = changes
    }
}

extension SQLAdminStore: AdminTokenStore {
    public func createAdminToken(_ token: AdminToken, audit: AuditEntry) async throws(StoreError) {
        try await changing(audit) { transaction in
            try await transaction.query(
                """
                INSERT INTO admin_tokens (token_id, name, token_hash, created_at, revoked_at, role) VALUES (\(.uuid(token.id)),
                  \(.text(token.name)), \(.bytes(token.hash)), \(.date(token.createdAt)), \(.optional(token.revokedAt)),
                  \(.text(token.role.rawValue)))
                """
            )
        }
    }

    public func adminToken(withHash hash: [UInt8]) async throws(StoreError) -> AdminToken? {
        try await database.query("SELECT * FROM admin_tokens WHERE token_hash = \(.bytes(hash))").first.map(Self.adminToken)
    }

    public func listAdminTokens() async throws(StoreError) -> [AdminToken] {
        try await database.query("SELECT * FROM admin_tokens ORDER BY name").map(Self.adminToken)
    }

    public func revokeAdminToken(named name: String, at now: Date, audit: AuditEntry) async throws(StoreError) {
        try await changing(audit) { transaction in
            let rows = try await transaction.query(
                "UPDATE admin_tokens SET revoked_at = \(.date(now)) WHERE name = \(.text(name)) AND revoked_at IS NULL RETURNING token_id"
            )
            guard !rows.isEmpty else { throw StoreError.notFound("no live admin token named '\(name)'") }
        }
    }

    public func hasAdminTokens() async throws(StoreError) -> Bool {
        !(try await database.query("SELECT token_id FROM admin_tokens LIMIT 1")).isEmpty
    }

    static func adminToken(_ row: SQLRow) throws(StoreError) -> AdminToken {
        let roleText = try row.text("role")
        guard let role = AdminRole(rawValue: roleText) else { throw .corruptRow("admin token role '\(roleText)'") }
        return AdminToken(
            id: try row.uuid("token_id"),
            name: try row.text("name"),
            hash: try row.bytes("token_hash"),
            createdAt: try row.date("created_at"),
            revokedAt: try row.optionalDate("revoked_at"),
            role: role
        )
    }
}

extension SQLAdminStore: AuditLog {
    public func auditRecords(matching filter: AuditFilter, before: Int64?, limit: Int) async throws(StoreError) -> [AuditRecord] {
        // One static statement, its optional filters as `ListingFilter` says.
        let flag = ListingFilter.flag
        let rows = try await database.query(
            """
            SELECT * FROM audit_log
            WHERE seq < \(.int(before ?? Int64.max)) AND (\(flag(filter.appID != nil)) = 0 OR app_id =
              \(.uuid(filter.appID?.rawValue ?? ListingFilter.anyUUID))) AND (\(flag(filter.action != nil)) =
              0 OR action = \(.text(filter.action ?? ""))) AND (\(flag(filter.actor != nil)) = 0 OR actor =
              \(.text(filter.actor?.description ?? "")))
              AND occurred_at >= \(.date(filter.from ?? Date(millisecondsSince1970: 0))) AND occurred_at <
                \(.date(filter.to ?? Date(millisecondsSince1970: 253_402_300_799_000)))
            ORDER BY seq DESC LIMIT \(.int(Int64(limit)))
            """
        )
        return try rows.map { row throws(StoreError) in
            let actorText = try row.text("actor")
            guard let actor = Actor(actorText) else { throw .corruptRow("audit actor '\(actorText)'") }
            return AuditRecord(
                sequence: try row.int("seq"),
                entry: AuditEntry(
                    occurredAt: try row.date("occurred_at"),
                    actor: actor,
                    action: try row.text("action"),
                    targetType: try row.text("target_type"),
                    targetID: try row.text("target_id"),
                    appID: try row.optionalUUID("app_id").map(AppID.init),
                    before: try AuditRows.decodeSnapshot(try row.optionalText("before_state")),
                    after: try AuditRows.decodeSnapshot(try row.optionalText("after_state")),
                    requestID: try row.optionalText("request_id"),
                    sourceAddress: try row.optionalText("source_address")
                )
            )
        }
    }
}
