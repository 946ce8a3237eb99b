// STS: roles, temporary credentials from upstream STS services, OSS self-signing, presigned URLs.
// Serves seed 004 (the OSS SDK's STS and self-signed modes and signed URLs).

import Foundation
import GatehouseCore

/// Storage roles, and the credentials vended for them kept until they near expiry.
public final class SQLSTSRoleStore: CapabilityStore {
    let database: any SQLDatabase
    let changes: StoreChanges

    init(database: any SQLDatabase, changes: StoreChanges) {
        self.database = database
        self.changes = changes
    }
}

extension SQLSTSRoleStore: STSRoleStore {
    public func createRole(_ stored: StoredRole, audit: AuditEntry) async throws(StoreError) {
        try await changing(audit) { transaction in
            let columns = Self.roleColumns(stored)
            try await transaction.query(
                "INSERT INTO storage_roles (\(columns: columns.map(\.name))) VALUES (\(SQL.joined(columns.map { "\($0.value)" }, separator: ", ")))"
            )
        }
    }

    public func updateRole(from: STSRole, to updated: StoredRole, audit: AuditEntry) async throws(StoreError) {
        try await changing(audit) { transaction in
            let changed = Self.roleColumns(updated).filter { !["app_id", "role_id", "created_at"].contains($0.name) }
            let rows = try await transaction.query(
                """
                UPDATE storage_roles SET \(SQL.joined(changed.map { "\(identifier: $0.name) = \($0.value)" }, separator: ", "))
                WHERE app_id = \(from.appID.rawValue) AND role_id = \(from.roleID.rawValue) AND updated_at = \(from.updatedAt)
                RETURNING role_id
                """
            )
            guard !rows.isEmpty else { throw StoreError.conflict("role \(from.roleID) changed meanwhile") }
            try await transaction.query(
                "DELETE FROM sts_credentials WHERE app_id = \(.uuid(from.appID.rawValue)) AND role_id = \(.text(from.roleID.rawValue))"
            )
        }
    }

    public func role(appID: AppID, roleID: RoleID) async throws(StoreError) -> StoredRole? {
        try await database.query(
            "SELECT * FROM storage_roles WHERE app_id = \(.uuid(appID.rawValue)) AND role_id = \(.text(roleID.rawValue))"
        ).first.map(Self.role)
    }

    public func roles(appID: AppID) async throws(StoreError) -> [StoredRole] {
        try await database.query("SELECT * FROM storage_roles WHERE app_id = \(.uuid(appID.rawValue)) ORDER BY role_id").map(Self.role)
    }

    public func latestDecision(
        appID: AppID,
        deviceID: DeviceID,
        decidedAfter: Date
    ) async throws(StoreError) -> (decision: RiskDecision, accountID: String)? {
        let rows = try await database.query(
            """
            SELECT decision, account_id FROM risk_decisions WHERE app_id = \(.uuid(appID.rawValue)) AND device_id = \(.text(deviceID.rawValue)) AND
              decided_at > \(.date(decidedAfter))
            ORDER BY decided_at DESC LIMIT 1
            """
        )
        guard let row = rows.first else { return nil }
        guard let decision = RiskDecision(rawValue: try row.text("decision")) else { throw .corruptRow("risk decision") }
        return (decision, try row.text("account_id"))
    }

    public func cachedCredentials(appID: AppID, roleID: RoleID, cacheKey: String) async throws(StoreError) -> CachedCredentials? {
        try await database.query(
            """
            SELECT sealed_credentials, expires_at FROM sts_credentials WHERE app_id = \(.uuid(appID.rawValue)) AND role_id =
              \(.text(roleID.rawValue)) AND cache_key = \(.text(cacheKey))
            """
        ).first.map { row throws(StoreError) in
            CachedCredentials(sealed: try row.bytes("sealed_credentials"), expiresAt: try row.date("expires_at"))
        }
    }

    public func cacheCredentials(
        appID: AppID,
        roleID: RoleID,
        cacheKey: String,
        _ credentials: CachedCredentials,
        at now: Date
    ) async throws(StoreError) {
        try await database.query(
            """
            INSERT INTO sts_credentials (app_id, role_id, cache_key, sealed_credentials, expires_at, created_at)
            VALUES (\(.uuid(appID.rawValue)), \(.text(roleID.rawValue)), \(.text(cacheKey)), \(.bytes(credentials.sealed)),
              \(.date(credentials.expiresAt)), \(.date(now)))
            ON CONFLICT (app_id, role_id, cache_key)
            DO UPDATE SET sealed_credentials = excluded.sealed_credentials, expires_at = excluded.expires_at, created_at = excluded.created_at
            """
        )
    }

    /// The role's columns, each named beside its value, so that the INSERT and the UPDATE bind alike.
    static func roleColumns(_ stored: StoredRole) -> [(name: String, value: SQLValue)] {
        let r = stored.role
        return [
            ("app_id", .uuid(r.appID.rawValue)), ("role_id", .text(r.roleID.rawValue)), ("provider", .text(r.provider.rawValue)),
            ("sts_endpoint", .text(r.stsEndpoint)), ("region", .text(r.region)), ("role_arn", .text(r.roleArn)),
            ("external_id", .optional(r.externalID)), ("duration_seconds", .int(Int64(r.durationSeconds))),
            ("max_duration_seconds", .int(Int64(r.maxDurationSeconds))), ("policy_template", .optional(r.policyTemplate)),
            ("storage_endpoint", .optional(r.storageEndpoint)), ("addressing", .text(r.addressing.rawValue)),
            ("attest_id", .text(r.attestID.rawValue)), ("require_risk_decision", .int(r.requireRiskDecision ? 1 : 0)),
            ("self_signed", .int(r.selfSigned ? 1 : 0)), ("sealed_key", .bytes(stored.sealedKey)), ("status", .text(r.status.rawValue)),
            ("created_at", .date(r.createdAt)), ("updated_at", .date(r.updatedAt)),
            ("require_hardware", .int(r.requireHardwareAttestation ? 1 : 0)), ("accept_play_integrity", .optional(r.acceptPlayIntegrity?.rawValue)),
        ]
    }

    static func role(_ row: SQLRow) throws(StoreError) -> StoredRole {
        guard let provider = STSProvider(rawValue: try row.text("provider")),
            let addressing = StorageEndpoint.Addressing(rawValue: try row.text("addressing")),
            let status = RoleStatus(rawValue: try row.text("status")),
            let roleID = try? RoleID(validating: try row.text("role_id")),
            let attestID = try? AttestID(validating: try row.text("attest_id"))
        else { throw .corruptRow("storage role row") }
        var role = STSRole(
            appID: AppID(try row.uuid("app_id")),
            roleID: roleID,
            provider: provider,
            stsEndpoint: try row.text("sts_endpoint"),
            region: try row.text("region"),
            roleArn: try row.text("role_arn"),
            attestID: attestID,
            createdAt: try row.date("created_at")
        )
        role.externalID = try row.optionalText("external_id")
        role.durationSeconds = Int(try row.int("duration_seconds"))
        role.maxDurationSeconds = Int(try row.int("max_duration_seconds"))
        role.policyTemplate = try row.optionalText("policy_template")
        role.storageEndpoint = try row.optionalText("storage_endpoint")
        role.addressing = addressing
        role.requireRiskDecision = try row.int("require_risk_decision") == 1
        role.requireHardwareAttestation = try row.int("require_hardware") == 1
        if let level = try row.optionalText("accept_play_integrity") {
            guard let parsed = PlayIntegrityLevel(rawValue: level) else { throw .corruptRow("role accept_play_integrity") }
            role.acceptPlayIntegrity = parsed
        }
        role.selfSigned = try row.int("self_signed") == 1
        role.status = status
        role.updatedAt = try row.date("updated_at")
        return StoredRole(role: role, sealedKey: try row.bytes("sealed_key"))
    }
}

extension SQLSTSRoleStore: ExpiringRows {
    /// Cached STS credentials past their expiry.
    func deleteExpired(_ round: RetentionRound, in locked: any SQLDatabase) async throws -> PurgeReport {
        var report = PurgeReport()
        report.credentials += try await deleteExpired(from: "sts_credentials", key: "cache_key", before: round.now, in: locked)
        return report
    }
}
