/// A statement that every risk query or gate check runs, so that PostgreSQL should parse and plan it
/// once per connection instead of once per request (parsing and planning were a sixth of the machine
/// under risk-query load, `docs/PERFORMANCE.md`). Its text is fixed: statements whose text varies with a
/// batch's size stay unprepared. SQLite runs the text as any other statement.
protocol PreparedSQL: Sendable {
    /// The name the statement is prepared under on each connection; unique among prepared statements.
    static var name: String { get }
    static var sql: String { get }
}

extension SQLDatabase {
    /// Runs the statement as plain text, for databases that prepare nothing.
    @discardableResult
    func query<Statement: PreparedSQL>(_ statement: Statement.Type, _ binds: [SQLValue]) async throws(StoreError) -> [SQLRow] {
        try await query(Statement.sql, binds)
    }
}
