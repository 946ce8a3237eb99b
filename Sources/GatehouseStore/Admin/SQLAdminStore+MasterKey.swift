import Foundation
import GatehouseCore

extension SQLAdminStore {
    /// Every value sealed with the master key, with the row it belongs to.
    public func sealedValues() async throws(StoreError) -> [SealedValue] {
        try await Self.sealedValues(in: database)
    }

    /// Replaces every sealed value by its re-sealed counterpart and the key check by `keyCheck`, in
    /// one transaction with the tables locked against writers; drops the cached STS credentials
    /// (sealed too, and fetched again on demand). Refuses with a conflict when the sealed values are
    /// no longer exactly `replacements`' old ones (a secret was added or changed meanwhile).
    public func replaceSealedValues(
        _ replacements: [(old: SealedValue, new: SealedValue)],
        keyCheck: [UInt8],
        audit: AuditEntry
    ) async throws(StoreError) {
        let dialect = database.dialect
        try await changing(audit) { transaction in
            if dialect == .postgres {
                // SQLite's BEGIN IMMEDIATE already keeps other writers out.
                try await transaction.query(
                    "LOCK TABLE app_secrets, attesters, signing_keys, storage_roles, sts_credentials, gatehouse_settings IN EXCLUSIVE MODE"
                )
            }
            let current = try await Self.sealedValues(in: transaction)
            guard current.count == replacements.count, Set(current.map(Key.init)) == Set(replacements.map { Key($0.old) }) else {
                throw StoreError.conflict("sealed values changed during the rotation; run it again")
            }
            for (_, new) in replacements { try await Self.write(new, in: transaction) }
            try await transaction.query("DELETE FROM sts_credentials")
            let updated = try await transaction.query(
                "UPDATE gatehouse_settings SET value = \(.bytes(keyCheck)) WHERE name = 'master_key_check' RETURNING name"
            )
            guard !updated.isEmpty else { throw StoreError.notFound("the master key check (start the server once first)") }
        }
    }

    /// A sealed value's row and ciphertext, hashable for comparing two readings.
    private struct Key: Hashable {
        let context: String
        let sealed: [UInt8]
        init(_ value: SealedValue) {
            context = value.context
            sealed = value.sealed
        }
    }

    private static func sealedValues(in database: any SQLDatabase) async throws(StoreError) -> [SealedValue] {
        var values: [SealedValue] = []
        // A server secret kept as its hash has no sealed copy to reseal.
        for row in try await database.query(
            "SELECT app_id, kind, version, sealed FROM app_secrets WHERE length(sealed) > 0 ORDER BY app_id, kind, version"
        ) {
            guard let kind = SecretKind(rawValue: try row.text("kind")) else { throw .corruptRow("app_secrets.kind") }
            values.append(
                .appSecret(appID: AppID(try row.uuid("app_id")), kind: kind, version: Int(try row.int("version")), sealed: try row.bytes("sealed"))
            )
        }
        for row in try await database.query(
            "SELECT app_id, attest_id, sealed_secret FROM attesters WHERE sealed_secret IS NOT NULL ORDER BY app_id, attest_id"
        ) {
            values.append(
                .attesterSecret(appID: AppID(try row.uuid("app_id")), attestID: try row.text("attest_id"), sealed: try row.bytes("sealed_secret"))
            )
        }
        for row in try await database.query(
            "SELECT app_id, attest_id, sealed_credentials FROM attesters WHERE sealed_credentials IS NOT NULL ORDER BY app_id, attest_id"
        ) {
            values.append(
                .attesterCredentials(
                    appID: AppID(try row.uuid("app_id")),
                    attestID: try row.text("attest_id"),
                    sealed: try row.bytes("sealed_credentials")
                )
            )
        }
        for row in try await database.query("SELECT kid, sealed_key FROM signing_keys ORDER BY kid") {
            values.append(.signingKey(kid: try row.text("kid"), sealed: try row.bytes("sealed_key")))
        }
        for row in try await database.query("SELECT app_id, role_id, sealed_key FROM storage_roles ORDER BY app_id, role_id") {
            values.append(.roleKey(appID: AppID(try row.uuid("app_id")), roleID: try row.text("role_id"), sealed: try row.bytes("sealed_key")))
        }
        return values
    }

    private static func write(_ value: SealedValue, in database: any SQLDatabase) async throws(StoreError) {
        switch value {
        case .appSecret(let appID, let kind, let version, let sealed):
            try await database.query(
                """
                UPDATE app_secrets SET sealed = \(.bytes(sealed)) WHERE app_id = \(.uuid(appID.rawValue)) AND kind = \(.text(kind.rawValue)) AND
                  version = \(.int(Int64(version)))
                """
            )
        case .attesterSecret(let appID, let attestID, let sealed):
            try await database.query(
                "UPDATE attesters SET sealed_secret = \(.bytes(sealed)) WHERE app_id = \(.uuid(appID.rawValue)) AND attest_id = \(.text(attestID))"
            )
        case .attesterCredentials(let appID, let attestID, let sealed):
            try await database.query(
                """
                UPDATE attesters SET sealed_credentials = \(.bytes(sealed)) WHERE app_id = \(.uuid(appID.rawValue)) AND attest_id =
                  \(.text(attestID))
                """
            )
        case .signingKey(let kid, let sealed):
            try await database.query("UPDATE signing_keys SET sealed_key = \(.bytes(sealed)) WHERE kid = \(.text(kid))")
        case .roleKey(let appID, let roleID, let sealed):
            try await database.query(
                "UPDATE storage_roles SET sealed_key = \(.bytes(sealed)) WHERE app_id = \(.uuid(appID.rawValue)) AND role_id = \(.text(roleID))"
            )
        }
    }
}
