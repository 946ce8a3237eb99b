// STS: roles, temporary credentials from upstream STS services, OSS self-signing, presigned URLs.
// Serves seed 004 (the OSS SDK's STS and self-signed modes and signed URLs).

import Foundation
import GatehouseCore

extension SQLStore: STSRoleStore {
    public func createRole(_ stored: StoredRole, audit: AuditEntry) async throws(StoreError) {
        try await changing(audit) { transaction in
            try await transaction.query(
                """
                INSERT INTO storage_roles (app_id, role_id, provider, sts_endpoint, region, role_arn, external_id, duration_seconds,
                                           max_duration_seconds, policy_template, storage_endpoint, addressing, attest_id,
                                           require_risk_decision, self_signed, sealed_key, status, created_at, updated_at,
                                           require_hardware)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20)
                """,
                Self.roleBinds(stored)
            )
        }
    }

    public func updateRole(from: STSRole, to updated: StoredRole, audit: AuditEntry) async throws(StoreError) {
        try await changing(audit) { transaction in
            let rows = try await transaction.query(
                """
                UPDATE storage_roles SET provider = $3, sts_endpoint = $4, region = $5, role_arn = $6, external_id = $7,
                    duration_seconds = $8, max_duration_seconds = $9, policy_template = $10, storage_endpoint = $11, addressing = $12,
                    attest_id = $13, require_risk_decision = $14, self_signed = $15, sealed_key = $16, status = $17, updated_at = $19,
                    require_hardware = $20
                WHERE app_id = $1 AND role_id = $2 AND updated_at = $21
                RETURNING role_id
                """,
                Self.roleBinds(updated) + [.date(from.updatedAt)]
            )
            guard !rows.isEmpty else { throw StoreError.conflict("role \(from.roleID) changed meanwhile") }
            try await transaction.query(
                "DELETE FROM sts_credentials WHERE app_id = $1 AND role_id = $2",
                [.uuid(from.appID.rawValue), .text(from.roleID.rawValue)]
            )
        }
    }

    public func role(appID: AppID, roleID: RoleID) async throws(StoreError) -> StoredRole? {
        try await database.query(
            "SELECT * FROM storage_roles WHERE app_id = $1 AND role_id = $2",
            [.uuid(appID.rawValue), .text(roleID.rawValue)]
        ).first.map(Self.role)
    }

    public func roles(appID: AppID) async throws(StoreError) -> [StoredRole] {
        try await database.query("SELECT * FROM storage_roles WHERE app_id = $1 ORDER BY role_id", [.uuid(appID.rawValue)]).map(Self.role)
    }

    public func latestDecision(
        appID: AppID,
        deviceID: DeviceID,
        decidedAfter: Date
    ) async throws(StoreError) -> (decision: RiskDecision, accountID: String)? {
        let rows = try await database.query(
            """
            SELECT decision, account_id FROM risk_decisions WHERE app_id = $1 AND device_id = $2 AND decided_at > $3
            ORDER BY decided_at DESC LIMIT 1
            """,
            [.uuid(appID.rawValue), .text(deviceID.rawValue), .date(decidedAfter)]
        )
        guard let row = rows.first else { return nil }
        guard let decision = RiskDecision(rawValue: try row.text("decision")) else { throw .corruptRow("risk decision") }
        return (decision, try row.text("account_id"))
    }

    public func cachedCredentials(appID: AppID, roleID: RoleID, cacheKey: String) async throws(StoreError) -> CachedCredentials? {
        try await database.query(
            "SELECT sealed_credentials, expires_at FROM sts_credentials WHERE app_id = $1 AND role_id = $2 AND cache_key = $3",
            [.uuid(appID.rawValue), .text(roleID.rawValue), .text(cacheKey)]
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
            VALUES ($1, $2, $3, $4, $5, $6)
            ON CONFLICT (app_id, role_id, cache_key)
            DO UPDATE SET sealed_credentials = excluded.sealed_credentials, expires_at = excluded.expires_at, created_at = excluded.created_at
            """,
            [
                .uuid(appID.rawValue), .text(roleID.rawValue), .text(cacheKey), .bytes(credentials.sealed), .date(credentials.expiresAt),
                .date(now),
            ]
        )
    }

    static func roleBinds(_ stored: StoredRole) -> [SQLValue] {
        let r = stored.role
        return [
            .uuid(r.appID.rawValue), .text(r.roleID.rawValue), .text(r.provider.rawValue), .text(r.stsEndpoint), .text(r.region),
            .text(r.roleArn), .optional(r.externalID), .int(Int64(r.durationSeconds)), .int(Int64(r.maxDurationSeconds)),
            .optional(r.policyTemplate), .optional(r.storageEndpoint), .text(r.addressing.rawValue), .text(r.attestID.rawValue),
            .int(r.requireRiskDecision ? 1 : 0), .int(r.selfSigned ? 1 : 0), .bytes(stored.sealedKey), .text(r.status.rawValue),
            .date(r.createdAt), .date(r.updatedAt), .int(r.requireHardwareAttestation ? 1 : 0),
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
        role.selfSigned = try row.int("self_signed") == 1
        role.status = status
        role.updatedAt = try row.date("updated_at")
        return StoredRole(role: role, sealedKey: try row.bytes("sealed_key"))
    }
}
