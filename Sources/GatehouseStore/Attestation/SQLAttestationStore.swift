import Foundation
import GatehouseCore

/// Attesters, signing keys, spent solutions and tokens, the SDK's configuration, and attested device
/// keys; this instance's copy of each app's attesters, which every challenge and gate reads.
public final class SQLAttestationStore: CapabilityStore {
    let database: any SQLDatabase
    let changes: StoreChanges
    let cachedAttesters: ReadThroughCache<AppID, [StoredAttester]>

    init(database: any SQLDatabase, changes: StoreChanges) {
        self.database = database
        self.changes = changes
        cachedAttesters = ReadThroughCache(lifetime: SQLStore.cacheLifetime, changes: changes)
    }
}

extension SQLAttestationStore: AttestationStore {
    public func createAttester(_ stored: StoredAttester, audit: AuditEntry) async throws(StoreError) {
        try await changing(audit) { transaction in
            let a = stored.attester
            let columns = try Self.attesterColumns(stored)
            try await transaction.query(
                "INSERT INTO attesters (\(columns: columns.map(\.name))) VALUES (\(SQL.joined(columns.map { "\($0.value)" }, separator: ", ")))"
            )
            try await Self.bumpConfigVersion(a.appID, at: a.updatedAt, in: transaction)
        }
    }

    public func updateAttester(from: Attester, to updated: StoredAttester, audit: AuditEntry) async throws(StoreError) {
        try await changing(audit) { transaction in
            let changed = try Self.attesterColumns(updated).filter { !["app_id", "attest_id", "created_at"].contains($0.name) }
            let rows = try await transaction.query(
                """
                UPDATE attesters SET \(SQL.joined(changed.map { "\(identifier: $0.name) = \($0.value)" }, separator: ", "))
                WHERE app_id = \(from.appID.rawValue) AND attest_id = \(from.attestID.rawValue) AND updated_at = \(from.updatedAt)
                RETURNING attest_id
                """
            )
            guard !rows.isEmpty else { throw StoreError.conflict("attester \(from.attestID) changed meanwhile") }
            try await Self.bumpConfigVersion(from.appID, at: updated.attester.updatedAt, in: transaction)
        }
    }

    public func attester(appID: AppID, attestID: AttestID) async throws(StoreError) -> StoredAttester? {
        try await database.query(
            "SELECT * FROM attesters WHERE app_id = \(.uuid(appID.rawValue)) AND attest_id = \(.text(attestID.rawValue))"
        ).first.map(Self.attester)
    }

    public func signingKeys(publishedAfter: Date) async throws(StoreError) -> [StoredSigningKey] {
        try await database.query(
            "SELECT * FROM signing_keys WHERE retired_at IS NULL OR retired_at > \(.date(publishedAfter)) ORDER BY created_at DESC, kid"
        ).map(Self.signingKey)
    }

    public func insertFirstSigningKey(_ key: StoredSigningKey) async throws(StoreError) -> Bool {
        let rows = try await database.query(
            """
            INSERT INTO signing_keys (kid, sealed_key, created_at, retired_at) VALUES (\(.text(key.kid)), \(.bytes(key.sealedKey)),
              \(.date(key.createdAt)), NULL) ON CONFLICT DO NOTHING RETURNING kid
            """
        )
        return !rows.isEmpty
    }

    public func rotateSigningKey(to key: StoredSigningKey, audit: AuditEntry) async throws(StoreError) {
        try await changing(audit) { transaction in
            try await transaction.query("UPDATE signing_keys SET retired_at = \(.date(key.createdAt)) WHERE retired_at IS NULL")
            try await transaction.query(
                """
                INSERT INTO signing_keys (kid, sealed_key, created_at, retired_at) VALUES (\(.text(key.kid)), \(.bytes(key.sealedKey)),
                  \(.date(key.createdAt)), NULL)
                """
            )
        }
    }

    public func useSolution(appID: AppID, replayKey: String, expiresAt: Date) async throws(StoreError) -> Bool {
        let rows = try await database.query(
            """
            INSERT INTO attest_solutions (app_id, replay_key, expires_at) VALUES (\(.uuid(appID.rawValue)), \(.text(replayKey)), \(.date(expiresAt)))
            ON CONFLICT DO NOTHING RETURNING replay_key
            """
        )
        return !rows.isEmpty
    }

    public func useToken(appID: AppID, jti: String, limit: Int, expiresAt: Date) async throws(StoreError) -> Bool {
        // One statement: the first use inserts, later ones increment while under the limit, so
        // concurrent gates on several instances cannot together exceed it.
        let rows = try await database.query(
            """
            INSERT INTO attest_token_uses (app_id, jti, uses, expires_at) VALUES (\(.uuid(appID.rawValue)), \(.text(jti)), 1, \(.date(expiresAt)))
            ON CONFLICT (app_id, jti) DO UPDATE SET uses = attest_token_uses.uses + 1 WHERE attest_token_uses.uses < \(.int(Int64(limit)))
            RETURNING uses
            """
        )
        return !rows.isEmpty
    }

    public func recentActivity(appID: AppID, deviceID: DeviceID, at now: Date) async throws(StoreError) -> RecentDeviceActivity {
        let (app, device, hourAgo, tenMinutesAgo) = (appID.rawValue, deviceID.rawValue, now.addingTimeInterval(-3600), now.addingTimeInterval(-600))
        // Each count stops past every level's threshold (AdaptiveDifficulty's are at most 20): a
        // device's own flood of tokens or failures costs no more to count than a quiet one.
        let cap = 64
        let rows = try await database.query(
            """
            SELECT
              (SELECT count(*) FROM (SELECT 1 FROM risk_decisions WHERE app_id = \(app) AND device_id = \(device) AND decided_at > \(hourAgo)
                AND decision = 'review' ORDER BY decided_at DESC LIMIT \(cap)) AS r) AS reviews,
              (SELECT count(*) FROM (SELECT 1 FROM risk_decisions WHERE app_id = \(app) AND device_id = \(device) AND decided_at > \(hourAgo)
                AND decision = 'reject' ORDER BY decided_at DESC LIMIT \(cap)) AS j) AS rejects,
              (SELECT count(*) FROM (SELECT 1 FROM consumed_ztokens WHERE app_id = \(app) AND device_id = \(device) AND consumed_at > \(tenMinutesAgo)
                ORDER BY consumed_at DESC LIMIT \(cap)) AS z) AS ztokens,
              (SELECT count(*) FROM risk_lists WHERE app_id = \(app) AND kind = 'deny' AND subject = 'device' AND value = \(device)) AS denied,
              (SELECT count(*) FROM (SELECT 1 FROM signature_failures WHERE app_id = \(app) AND device_id = \(device) AND failed_at > \(hourAgo)
                ORDER BY failed_at DESC LIMIT \(cap)) AS f) AS signature_failures
            """
        )
        guard let row = rows.first else { throw .corruptRow("recent activity returned nothing") }
        return RecentDeviceActivity(
            reviewsLastHour: Int(try row.int("reviews")),
            rejectsLastHour: Int(try row.int("rejects")),
            ztokensLastTenMinutes: Int(try row.int("ztokens")),
            denyListed: try row.int("denied") > 0,
            signatureFailuresLastHour: Int(try row.int("signature_failures"))
        )
    }

    public func sdkConfig(appID: AppID) async throws(StoreError) -> StoredSDKConfig {
        guard let row = try await database.query("SELECT * FROM sdk_configs WHERE app_id = \(.uuid(appID.rawValue))").first else {
            return StoredSDKConfig(version: 0, protectedHosts: [])
        }
        return try Self.sdkConfig(row)
    }

    public func setProtectedHosts(
        appID: AppID,
        hosts: [ProtectedHost],
        at now: Date,
        audit: AuditEntry
    ) async throws(StoreError)
        -> StoredSDKConfig
    {
        guard let encoded = try? JSONEncoder().encode(hosts) else { throw .corruptRow("protected hosts do not encode") }
        let text = String(decoding: encoded, as: UTF8.self)
        try await changing(audit) { transaction in
            try await transaction.query(
                """
                INSERT INTO sdk_configs (app_id, version, protected_hosts, updated_at) VALUES (\(.uuid(appID.rawValue)), 1, \(.text(text)),
                  \(.date(now)))
                ON CONFLICT (app_id) DO UPDATE SET version = sdk_configs.version + 1, protected_hosts = excluded.protected_hosts,
                    updated_at = excluded.updated_at
                """
            )
        }
        return try await sdkConfig(appID: appID)
    }

    static func bumpConfigVersion(_ appID: AppID, at now: Date, in transaction: any SQLDatabase) async throws(StoreError) {
        try await transaction.query(
            """
            INSERT INTO sdk_configs (app_id, version, protected_hosts, updated_at) VALUES (\(.uuid(appID.rawValue)), 1, '[]', \(.date(now)))
            ON CONFLICT (app_id) DO UPDATE SET version = sdk_configs.version + 1, updated_at = excluded.updated_at
            """
        )
    }

    /// The attester's columns, each named beside its value, so that the INSERT and the UPDATE bind alike.
    static func attesterColumns(_ stored: StoredAttester) throws(StoreError) -> [(name: String, value: SQLValue)] {
        let a = stored.attester
        guard let routes = try? JSONEncoder().encode(a.routes) else { throw .corruptRow("routes do not encode") }
        var accept: SQLValue = .null
        if let acceptance = a.acceptPlayIntegrity {
            guard let encoded = try? JSONEncoder().encode(acceptance) else { throw .corruptRow("acceptPlayIntegrity does not encode") }
            accept = .text(String(decoding: encoded, as: UTF8.self))
        }
        var hardware: SQLValue = .null
        if let row = HardwareSettingsRow(a) {
            guard let encoded = try? JSONEncoder().encode(row) else { throw .corruptRow("hardware settings do not encode") }
            hardware = .text(String(decoding: encoded, as: UTF8.self))
        }
        return [
            ("app_id", .uuid(a.appID.rawValue)), ("attest_id", .text(a.attestID.rawValue)), ("kind", .text(a.kind.rawValue)),
            ("pow_format", .text(a.pow.format.rawValue)), ("max_number", .int(Int64(a.pow.maxNumber))), ("cost", .int(Int64(a.pow.cost))),
            ("key_prefix", .text(a.pow.keyPrefix)), ("adaptive", .int(a.adaptive ? 1 : 0)),
            ("challenge_ttl_seconds", .int(Int64(a.challengeLifetimeSeconds))), ("token_ttl_seconds", .int(Int64(a.tokenLifetimeSeconds))),
            ("token_header", .text(a.tokenHeader)), ("max_uses", a.maxUses.map { .int(Int64($0)) } ?? .null),
            ("algorithm", .text(a.algorithm.rawValue)), ("sealed_secret", stored.sealedSecret.map(SQLValue.bytes) ?? .null),
            ("bind_header", .optional(a.bindHeader)), ("routes", .text(String(decoding: routes, as: UTF8.self))),
            ("status", .text(a.status.rawValue)), ("created_at", .date(a.createdAt)), ("updated_at", .date(a.updatedAt)),
            ("require_signature", .int(a.requireSignature ? 1 : 0)), ("hardware_settings", hardware),
            ("require_hardware", .int(a.requireHardwareAttestation ? 1 : 0)), ("enforcement", .text(a.enforcement.rawValue)),
            ("sealed_credentials", stored.sealedCredentials.map(SQLValue.bytes) ?? .null), ("accept_play_integrity", accept),
        ]
    }

    static func attester(_ row: SQLRow) throws(StoreError) -> StoredAttester {
        guard let kind = AttesterKind(rawValue: try row.text("kind")), let format = PowFormat(rawValue: try row.text("pow_format")),
            let algorithm = JWSAlgorithm(rawValue: try row.text("algorithm")), let status = AttesterStatus(rawValue: try row.text("status")),
            let attestID = try? AttestID(validating: try row.text("attest_id")),
            let routes = try? JSONDecoder().decode([ProtectedRoute].self, from: Data(try row.text("routes").utf8))
        else { throw .corruptRow("attester row") }
        let maxUses: Int? = try row.isNull("max_uses") ? nil : Int(try row.int("max_uses"))
        var hardware: HardwareSettingsRow?
        if let text = try row.optionalText("hardware_settings") {
            guard let decoded = try? JSONDecoder().decode(HardwareSettingsRow.self, from: Data(text.utf8)) else {
                throw .corruptRow("attester hardware settings")
            }
            hardware = decoded
        }
        guard let enforcement = AttesterEnforcement(rawValue: try row.optionalText("enforcement") ?? "enforce") else {
            throw .corruptRow("attester enforcement")
        }
        var attester = Attester(
            appID: AppID(try row.uuid("app_id")),
            attestID: attestID,
            kind: kind,
            pow: PowDifficulty(
                format: format,
                maxNumber: Int(try row.int("max_number")),
                cost: Int(try row.int("cost")),
                keyPrefix: try row.text("key_prefix")
            ),
            adaptive: try row.int("adaptive") == 1,
            challengeLifetimeSeconds: Int(try row.int("challenge_ttl_seconds")),
            tokenLifetimeSeconds: Int(try row.int("token_ttl_seconds")),
            tokenHeader: try row.text("token_header"),
            maxUses: maxUses,
            algorithm: algorithm,
            bindHeader: try row.optionalText("bind_header"),
            requireSignature: try row.int("require_signature") == 1,
            appAttest: hardware?.appAttestPolicy,
            androidKeyAttestation: try hardware?.androidPolicy,
            requireHardwareAttestation: try row.int("require_hardware") == 1,
            routes: routes,
            status: status,
            createdAt: try row.date("created_at"),
            updatedAt: try row.date("updated_at")
        )
        attester.enforcement = enforcement
        attester.playIntegrity = hardware?.playIntegritySettings
        if let text = try row.optionalText("accept_play_integrity") {
            guard let acceptance = try? JSONDecoder().decode(PlayIntegrityAcceptance.self, from: Data(text.utf8)) else {
                throw .corruptRow("attester acceptPlayIntegrity")
            }
            attester.acceptPlayIntegrity = acceptance
        }
        return StoredAttester(
            attester: attester,
            sealedSecret: try row.isNull("sealed_secret") ? nil : try row.bytes("sealed_secret"),
            sealedCredentials: try row.isNull("sealed_credentials") ? nil : try row.bytes("sealed_credentials")
        )
    }

    static func signingKey(_ row: SQLRow) throws(StoreError) -> StoredSigningKey {
        StoredSigningKey(
            kid: try row.text("kid"),
            sealedKey: try row.bytes("sealed_key"),
            createdAt: try row.date("created_at"),
            retiredAt: try row.optionalDate("retired_at")
        )
    }

    static func sdkConfig(_ row: SQLRow) throws(StoreError) -> StoredSDKConfig {
        guard let hosts = try? JSONDecoder().decode([ProtectedHost].self, from: Data(try row.text("protected_hosts").utf8)) else {
            throw .corruptRow("sdk config hosts")
        }
        return StoredSDKConfig(version: try row.int("version"), protectedHosts: hosts)
    }
}

extension SQLAttestationStore: ExpiringRows {
    /// Used proof-of-work solutions and limited-use tokens' counts past their expiry.
    func deleteExpired(_ round: RetentionRound, in locked: any SQLDatabase) async throws -> PurgeReport {
        var report = PurgeReport()
        report.attestations += try await deleteExpired(.attestSolutions, key: "replay_key", round, in: locked)
        report.attestations += try await deleteExpired(from: "attest_token_uses", key: "jti", before: round.now, in: locked)
        // The farm counts look back a day at most.
        report.velocityEdges += try await deleteInBatches(
            """
            DELETE FROM attestation_edges WHERE (app_id, kind, subject, member) IN
              (SELECT app_id, kind, subject, member FROM attestation_edges WHERE last_seen < \(round.now.addingTimeInterval(-25 * 3_600))
                LIMIT \(SQLRetention.purgeBatch))
            RETURNING kind
            """,
            in: locked
        )
        return report
    }
}
