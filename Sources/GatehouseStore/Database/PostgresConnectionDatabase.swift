import Logging
import PostgresNIO

/// One connection: pinned for a batch, inside a transaction, or holding the migration lock.
struct PostgresConnectionDatabase: SQLDatabase {
    let connection: PostgresConnection
    let logger: Logger
    var plansGenerically = false

    var dialect: SQLDialect { .postgres }
    var usage: PoolUsage { PoolUsage(inUse: 1, capacity: 1) }

    @discardableResult
    func query(_ sql: SQL) async throws(StoreError) -> [SQLRow] {
        do {
            return try await PostgresDatabase.run(sql.text, sql.binds) { try await connection.query($0, logger: logger) }
        } catch {
            throw PostgresDatabase.translate(error)
        }
    }

    @discardableResult
    func query<Statement: PreparedSQL>(_ statement: Statement.Type, _ sql: SQL) async throws(StoreError) -> [SQLRow] {
        do {
            try PreparedTexts.record(Statement.name, sql.text)
            let bindings = PostgresDatabase.bindings(sql.binds)
            return try await PostgresDatabase.decodeAll(try await connection.execute(PostgresPrepared<Statement>(bindings: bindings), logger: logger))
        } catch {
            throw PostgresDatabase.translate(error)
        }
    }

    func transaction<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        do {
            return try await connection.withTransaction(logger: logger) { _ in try await body(self) }
        } catch let error as PostgresTransactionError {
            throw PostgresDatabase.translate(error.closureError ?? error.beginError ?? error.commitError ?? error)
        }
    }

    func withMigrationLock<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await body(self)
    }

    func ifUnlocked<T: Sendable>(_ key: Int64, _ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T? {
        try await body(self)
    }
}

/// PostgresNIO prepares a statement on each connection the first time that connection runs it, under
/// the statement's name, and from then on sends only its parameters.
struct PostgresPrepared<Statement: PreparedSQL>: PostgresPreparedStatement {
    static var name: String { Statement.name }
    static var sql: String { PreparedTexts.text(Statement.name) }
    typealias Row = PostgresRow

    let bindings: PostgresBindings

    func makeBindings() -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
}
