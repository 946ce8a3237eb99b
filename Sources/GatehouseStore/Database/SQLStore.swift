import Foundation
import GatehouseCore

/// Every capability's store over the one database: each owns its statements, its cached rows and its
/// batched writes (in its own folder), and they share only the database and the count of changes that
/// empties their copies (`StoreChanges`). The SQL is written once in a subset both PostgreSQL and SQLite
/// run (`SQL` binds by interpolation, `ON CONFLICT`, `RETURNING`); the drivers map types.
public final class SQLStore: Sendable {
    let database: any SQLDatabase
    public let apps: SQLAppStore
    public let admin: SQLAdminStore
    public let deviceRisk: SQLDeviceRiskStore
    public let attestation: SQLAttestationStore
    public let captcha: SQLCaptchaStore
    public let signatures: SQLSignatureStore
    public let sts: SQLSTSRoleStore
    public let console: SQLConsoleStore
    public let retention: SQLRetention

    /// - Parameter queueWait: the longest a write waits in a group commit's queue and statement
    ///   together; with the statement's own bound, a queue behind a hung database cannot grow unbounded waits.
    init(database: any SQLDatabase, queueWait: Duration = .seconds(10)) {
        self.database = database
        let changes = StoreChanges()
        let activity = ActivityTally()
        apps = SQLAppStore(database: database, changes: changes)
        admin = SQLAdminStore(database: database, changes: changes)
        attestation = SQLAttestationStore(database: database, changes: changes)
        deviceRisk = SQLDeviceRiskStore(
            database: database,
            changes: changes,
            activity: activity,
            attestation: attestation,
            queueWait: queueWait
        )
        captcha = SQLCaptchaStore(database: database, changes: changes, activity: activity)
        signatures = SQLSignatureStore(database: database, changes: changes)
        sts = SQLSTSRoleStore(database: database, changes: changes)
        console = SQLConsoleStore(database: database, changes: changes, activity: activity)
        // In the order the foreign keys need: a captcha's passes before the challenge they point at,
        // counters with their decisions.
        retention = SQLRetention(database: database, stores: [deviceRisk, console, signatures, attestation, captcha, sts])
    }

    /// How long another instance's change can go unseen here (see `ReadThroughCache`).
    public static let cacheLifetime = Duration.seconds(2)
}

extension SQLStore: StoreMaintenance {
    public var dialect: SQLDialect { database.dialect }
    public var poolUsage: PoolUsage { database.usage }
    public var batchPoolUsage: PoolUsage? { database.dialect == .postgres ? database.forBatches.usage : nil }

    public func migrate() async throws -> [Int] {
        try await Migrator(database: database).migrate()
    }

    public func schemaStatus() async throws -> SchemaStatus {
        try await Migrator(database: database).status()
    }

    public func masterKeyCheck(orInsert candidate: [UInt8]) async throws(StoreError) -> [UInt8] {
        try await database.query(
            "INSERT INTO gatehouse_settings (name, value) VALUES ('master_key_check', \(.bytes(candidate))) ON CONFLICT (name) DO NOTHING"
        )
        let rows = try await database.query("SELECT value FROM gatehouse_settings WHERE name = 'master_key_check'")
        guard let row = rows.first else { throw .corruptRow("master key check missing after insert") }
        return try row.bytes("value")
    }
}
