import Foundation
import GatehouseCore

/// Server secrets stored before they were kept as hashes: found once at start, and given their verifier.
extension SQLAppStore {
    /// Server secret versions without a verifier (stored by an earlier build), at most `limit`.
    public func unhashedServerSecrets(limit: Int) async throws(StoreError) -> [SealedSecret] {
        try await database.query(
            """
            SELECT app_id, kind AS secret_kind, version AS secret_version, sealed AS secret_sealed, verifier AS secret_verifier,
              created_at AS secret_created_at, retires_at AS secret_retires_at
            FROM app_secrets WHERE kind = 'server' AND verifier IS NULL ORDER BY app_id, version LIMIT \(.int(Int64(limit)))
            """
        ).map(Self.secret)
    }

    /// Sets a version's verifier unless another instance did first.
    public func setVerifier(_ verifier: [UInt8], appID: AppID, version: Int) async throws(StoreError) {
        try await database.query(
            """
            UPDATE app_secrets SET verifier = \(.bytes(verifier)) WHERE app_id = \(.uuid(appID.rawValue)) AND kind = 'server'
              AND version = \(.int(Int64(version))) AND verifier IS NULL
            """
        )
    }
}
