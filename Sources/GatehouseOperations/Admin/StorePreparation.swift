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
    return true
}
