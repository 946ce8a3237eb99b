/// Every statement and transaction of the store with a bounded wait (`GATEHOUSE_DATABASE_TIMEOUT_SECONDS`):
/// a database that crashed, hangs or cannot be reached costs a request `limit` and a 503, never an
/// answer that does not come. A group commit's writer keeps the same bound on each batch itself
/// (`forGroupCommits`), without a task per statement, so a batch stuck on a dead connection fails its
/// callers in time and the next batch goes on. Migrations are not bounded: they run before the server
/// listens and may legitimately take long.
struct BoundedDatabase: SQLDatabase {
    let inner: any SQLDatabase
    let limit: Duration
    /// The purger's locked batches delete many rows; they get more time, still bounded.
    let maintenanceLimit: Duration

    var dialect: SQLDialect { inner.dialect }
    var usage: PoolUsage { inner.usage }
    var forBatches: any SQLDatabase { BoundedDatabase(inner: inner.forBatches, limit: limit, maintenanceLimit: maintenanceLimit) }
    var forGroupCommits: (database: any SQLDatabase, batchLimit: Duration?) { (inner.forBatches, limit) }
    var plansGenerically: Bool { inner.plansGenerically }

    @discardableResult
    func query(_ sql: SQL) async throws(StoreError) -> [SQLRow] {
        let inner = inner
        do {
            return try await BoundedWait.run(within: limit) { try await inner.query(sql) }
        } catch {
            throw error as? StoreError ?? .unavailable("\(type(of: error))")
        }
    }

    @discardableResult
    func query<Statement: PreparedSQL>(_ statement: Statement.Type, _ sql: SQL) async throws(StoreError) -> [SQLRow] {
        let inner = inner
        do {
            return try await BoundedWait.run(within: limit) { try await inner.query(statement, sql) }
        } catch {
            throw error as? StoreError ?? .unavailable("\(type(of: error))")
        }
    }

    func transaction<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        let inner = inner
        return try await BoundedWait.run(within: limit) { try await inner.transaction(body) }
    }

    func onOneConnection<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        let inner = inner
        return try await BoundedWait.run(within: limit) { try await inner.onOneConnection(body) }
    }

    func withMigrationLock<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await inner.withMigrationLock(body)
    }

    func ifUnlocked<T: Sendable>(_ key: Int64, _ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T? {
        let inner = inner
        return try await BoundedWait.run(within: maintenanceLimit) { try await inner.ifUnlocked(key, body) }
    }
}
