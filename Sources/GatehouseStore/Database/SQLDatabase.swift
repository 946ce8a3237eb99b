/// The little a store needs from a database: run one statement, run several atomically, and hold the
/// migration lock. Implemented once for PostgreSQL and once for SQLite.
protocol SQLDatabase: Sendable {
    var dialect: SQLDialect { get }

    /// Runs one statement. SQL text is always a literal in the store's code; values only travel as binds.
    @discardableResult
    func query(_ sql: SQL) async throws(StoreError) -> [SQLRow]

    /// Runs a statement of fixed text that the database may keep parsed and planned (`PreparedSQL`).
    func query<Statement: PreparedSQL>(_ statement: Statement.Type, _ sql: SQL) async throws(StoreError) -> [SQLRow]

    /// Runs `body` in one transaction: all of its writes land, or none.
    func transaction<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T

    /// Runs `body`'s statements on one connection, each committed on its own (no transaction): for
    /// work whose writes are one statement, which is atomic by itself.
    func onOneConnection<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T

    /// Runs `body` holding the cluster-wide migration lock, on one pinned connection.
    func withMigrationLock<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T

    /// Runs `body` if this process can take the lock named `key` without waiting; nil if another holds it.
    func ifUnlocked<T: Sendable>(_ key: Int64, _ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T?

    /// Database operations running right now, and how many can run at once (for the pool gauge).
    var usage: PoolUsage { get }

    /// The same database for the group commits' batches: on PostgreSQL a few connections of their own,
    /// opened with every prepared statement planned generically (`plansGenerically`), so that a batch
    /// need not ask for it in a round trip of its own. Itself elsewhere.
    var forBatches: any SQLDatabase { get }

    /// `forBatches` for a group commit, whose writer bounds each batch itself (`GroupCommit`): the
    /// database without this wrapper's bound on every statement, and that bound (nil where none).
    var forGroupCommits: (database: any SQLDatabase, batchLimit: Duration?) { get }

    /// Whether this database's connections already plan prepared statements once for any values
    /// (PostgreSQL's `plan_cache_mode = force_generic_plan`, set when they opened).
    var plansGenerically: Bool { get }
}

extension SQLDatabase {
    func onOneConnection<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await body(self)
    }

    var forBatches: any SQLDatabase { self }
    var forGroupCommits: (database: any SQLDatabase, batchLimit: Duration?) { (forBatches, nil) }
    var plansGenerically: Bool { false }
}

public enum SQLDialect: String, Sendable {
    case postgres, sqlite
}

public struct PoolUsage: Sendable, Equatable {
    public let inUse: Int
    public let capacity: Int
}
