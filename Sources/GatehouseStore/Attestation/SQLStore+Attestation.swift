import Foundation
import GatehouseCore

extension SQLStore: AttestationStore {
    public func createAttester(_ stored: StoredAttester, audit: AuditEntry) async throws(StoreError) {
        try await changing(audit) { transaction in
            let a = stored.attester
            try await transaction.query(
                """
                INSERT INTO attesters (app_id, attest_id, kind, pow_format, max_number, cost, key_prefix, adaptive, challenge_ttl_seconds,
                                       token_ttl_seconds, token_header, max_uses, algorithm, sealed_secret, bind_header, routes, status,
                                       created_at, updated_at, require_signature, hardware_settings, require_hardware)
                VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22)
                """,
                try Self.attesterBinds(stored)
            )
            try await Self.bumpConfigVersion(a.appID, at: a.updatedAt, in: transaction)
        }
    }

    public func updateAttester(from: Attester, to updated: StoredAttester, audit: AuditEntry) async throws(StoreError) {
        try await changing(audit) { transaction in
            let binds = try Self.attesterBinds(updated)
            let rows = try await transaction.query(
                """
                UPDATE attesters SET kind = $3, pow_format = $4, max_number = $5, cost = $6, key_prefix = $7, adaptive = $8,
                    challenge_ttl_seconds = $9, token_ttl_seconds = $10, token_header = $11, max_uses = $12, algorithm = $13,
                    sealed_secret = $14, bind_header = $15, routes = $16, status = $17, updated_at = $19, require_signature = $20,
                    hardware_settings = $21, require_hardware = $22
                WHERE app_id = $1 AND attest_id = $2 AND updated_at = $23
                RETURNING attest_id
                """,
                binds + [.date(from.updatedAt)]
            )
            guard !rows.isEmpty else { throw StoreError.conflict("attester \(from.attestID) changed meanwhile") }
            try await Self.bumpConfigVersion(from.appID, at: updated.attester.updatedAt, in: transaction)
        }
    }

    public func attester(appID: AppID, attestID: AttestID) async throws(StoreError) -> StoredAttester? {
        try await database.query(
            "SELECT * FROM attesters WHERE app_id = $1 AND attest_id = $2",
            [.uuid(appID.rawValue), .text(attestID.rawValue)]
        ).first.map(Self.attester)
    }

    public func attesters(appID: AppID) async throws(StoreError) -> [StoredAttester] {
        try await cachedAttesters.value(for: appID) { () async throws(StoreError) in
            try await self.database.query("SELECT * FROM attesters WHERE app_id = $1 ORDER BY attest_id", [.uuid(appID.rawValue)])
                .map(Self.attester)
        } ?? []
    }

    public func signingKeys(publishedAfter: Date) async throws(StoreError) -> [StoredSigningKey] {
        try await database.query(
            "SELECT * FROM signing_keys WHERE retired_at IS NULL OR retired_at > $1 ORDER BY created_at DESC, kid",
            [.date(publishedAfter)]
        ).map(Self.signingKey)
    }

    public func insertFirstSigningKey(_ key: StoredSigningKey) async throws(StoreError) -> Bool {
        let rows = try await database.query(
            "INSERT INTO signing_keys (kid, sealed_key, created_at, retired_at) VALUES ($1, $2, $3, NULL) ON CONFLICT DO NOTHING RETURNING kid",
            [.text(key.kid), .bytes(key.sealedKey), .date(key.createdAt)]
        )
        return !rows.isEmpty
    }

    public func rotateSigningKey(to key: StoredSigningKey, audit: AuditEntry) async throws(StoreError) {
        try await changing(audit) { transaction in
            try await transaction.query("UPDATE signing_keys SET retired_at = $1 WHERE retired_at IS NULL", [.date(key.createdAt)])
            try await transaction.query(
                "INSERT INTO signing_keys (kid, sealed_key, created_at, retired_at) VALUES ($1, $2, $3, NULL)",
                [.text(key.kid), .bytes(key.sealedKey), .date(key.createdAt)]
            )
        }
    }

    public func useSolution(appID: AppID, replayKey: String, expiresAt: Date) async throws(StoreError) -> Bool {
        let rows = try await database.query(
            """
            INSERT INTO attest_solutions (app_id, replay_key, expires_at) VALUES ($1, $2, $3)
            ON CONFLICT DO NOTHING RETURNING replay_key
            """,
            [.uuid(appID.rawValue), .text(replayKey), .date(expiresAt)]
        )
        return !rows.isEmpty
    }

    public func useToken(appID: AppID, jti: String, limit: Int, expiresAt: Date) async throws(StoreError) -> Bool {
        // One statement: the first use inserts, later ones increment while under the limit, so
        // concurrent gates on several instances cannot together exceed it.
        let rows = try await database.query(
            """
            INSERT INTO attest_token_uses (app_id, jti, uses, expires_at) VALUES ($1, $2, 1, $4)
            ON CONFLICT (app_id, jti) DO UPDATE SET uses = attest_token_uses.uses + 1 WHERE attest_token_uses.uses < $3
            RETURNING uses
            """,
            [.uuid(appID.rawValue), .text(jti), .int(Int64(limit)), .date(expiresAt)]
        )
        return !rows.isEmpty
    }

    public func recentActivity(appID: AppID, deviceID: DeviceID, at now: Date) async throws(StoreError) -> RecentDeviceActivity {
        let rows = try await database.query(
            """
            SELECT
              (SELECT count(*) FROM (SELECT 1 FROM risk_decisions WHERE app_id = $1 AND device_id = $2 AND decided_at > $3
                AND decision = 'review' ORDER BY decided_at DESC LIMIT $5) AS r) AS reviews,
              (SELECT count(*) FROM (SELECT 1 FROM risk_decisions WHERE app_id = $1 AND device_id = $2 AND decided_at > $3
                AND decision = 'reject' ORDER BY decided_at DESC LIMIT $5) AS j) AS rejects,
              (SELECT count(*) FROM (SELECT 1 FROM consumed_ztokens WHERE app_id = $1 AND device_id = $2 AND consumed_at > $4 ORDER BY consumed_at DESC LIMIT $5) AS z) AS ztokens,
              (SELECT count(*) FROM risk_lists WHERE app_id = $1 AND kind = 'deny' AND subject = 'device' AND value = $2) AS denied,
              (SELECT count(*) FROM (SELECT 1 FROM signature_failures WHERE app_id = $1 AND device_id = $2 AND failed_at > $3
                ORDER BY failed_at DESC LIMIT $5) AS f) AS signature_failures
            """,
            // Each count stops past every level's threshold (AdaptiveDifficulty's are at most 20): a
            // device's own flood of tokens or failures costs no more to count than a quiet one.
            [
                .uuid(appID.rawValue), .text(deviceID.rawValue), .date(now.addingTimeInterval(-3600)), .date(now.addingTimeInterval(-600)),
                .int(64),
            ]
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
        guard let row = try await database.query("SELECT * FROM sdk_configs WHERE app_id = $1", [.uuid(appID.rawValue)]).first else {
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
                INSERT INTO sdk_configs (app_id, version, protected_hosts, updated_at) VALUES ($1, 1, $2, $3)
                ON CONFLICT (app_id) DO UPDATE SET version = sdk_configs.version + 1, protected_hosts = excluded.protected_hosts,
                    updated_at = excluded.updated_at
                """,
                [.uuid(appID.rawValue), .text(text), .date(now)]
            )
        }
        return try await sdkConfig(appID: appID)
    }

    static func bumpConfigVersion(_ appID: AppID, at now: Date, in transaction: any SQLDatabase) async throws(StoreError) {
        try await transaction.query(
            """
            INSERT INTO sdk_configs (app_id, version, protected_hosts, updated_at) VALUES ($1, 1, '[]', $2)
            ON CONFLICT (app_id) DO UPDATE SET version = sdk_configs.version + 1, updated_at = excluded.updated_at
            """,
            [.uuid(appID.rawValue), .date(now)]
        )
    }

    static func attesterBinds(_ stored: StoredAttester) throws(StoreError) -> [SQLValue] {
        let a = stored.attester
        guard let routes = try? JSONEncoder().encode(a.routes) else { throw .corruptRow("routes do not encode") }
        var hardware: SQLValue = .null
        if let row = HardwareSettingsRow(a) {
            guard let encoded = try? JSONEncoder().encode(row) else { throw .corruptRow("hardware settings do not encode") }
            hardware = .text(String(decoding: encoded, as: UTF8.self))
        }
        return [
            .uuid(a.appID.rawValue), .text(a.attestID.rawValue), .text(a.kind.rawValue), .text(a.pow.format.rawValue),
            .int(Int64(a.pow.maxNumber)), .int(Int64(a.pow.cost)), .text(a.pow.keyPrefix), .int(a.adaptive ? 1 : 0),
            .int(Int64(a.challengeLifetimeSeconds)), .int(Int64(a.tokenLifetimeSeconds)), .text(a.tokenHeader),
            a.maxUses.map { .int(Int64($0)) } ?? .null, .text(a.algorithm.rawValue), stored.sealedSecret.map(SQLValue.bytes) ?? .null,
            .optional(a.bindHeader), .text(String(decoding: routes, as: UTF8.self)), .text(a.status.rawValue), .date(a.createdAt),
            .date(a.updatedAt), .int(a.requireSignature ? 1 : 0), hardware, .int(a.requireHardwareAttestation ? 1 : 0),
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
        let attester = Attester(
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
        return StoredAttester(attester: attester, sealedSecret: try row.isNull("sealed_secret") ? nil : try row.bytes("sealed_secret"))
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
