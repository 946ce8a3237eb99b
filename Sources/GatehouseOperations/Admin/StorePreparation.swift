import GatehouseCore
import GatehouseStore
import Logging

/// Migrates if asked, then checks the master key against the database's stored check value.
/// - Returns: whether the schema is current (else the instance stays not-ready).
@discardableResult
public func prepareStore(_ store: SQLStore, box: SecretBox, migrate: Bool, logger: Logger) async throws -> Bool {
    if migrate {
        let applied = try await store.migrate()
        if !applied.isEmpty { logger.info("applied migrations", metadata: ["versions": "\(applied)"]) }
    }
    let pending = try await store.schemaStatus().pending
    guard pending.isEmpty else {
        logger.warning("schema is behind this build; /health/ready answers 503 until `gatehouse migrate` runs", metadata: ["pending": "\(pending)"])
        return false
    }
    try box.verifyKeyCheck(try await store.masterKeyCheck(orInsert: box.makeKeyCheck()))
    try await hashServerSecrets(store, box: box, logger: logger)
    return true
}

/// Gives each server secret stored by an earlier build its verifier (`SealedSecret.verifier`), so that
/// its backend's requests are compared by hash too. A version that does not open is left as it is
/// (it never verified either). Idempotent, and safe with several instances starting at once.
func hashServerSecrets(_ store: SQLStore, box: SecretBox, logger: Logger) async throws {
    var hashed = 0
    while true {
        let batch = try await store.apps.unhashedServerSecrets(limit: 500)
        var progressed = false
        for secret in batch {
            guard let plaintext = try? secret.open(with: box) else { continue }
            try await store.apps.setVerifier(CredentialDigest.of(plaintext), appID: secret.appID, version: secret.version)
            hashed += 1
            progressed = true
        }
        if batch.count < 500 || !progressed { break }
    }
    if hashed > 0 { logger.info("server secrets given their verifier", metadata: ["versions": "\(hashed)"]) }
}
