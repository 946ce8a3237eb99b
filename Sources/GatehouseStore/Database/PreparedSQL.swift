import Synchronization

/// A statement that every risk query or gate check runs, so that PostgreSQL should parse and plan it
/// once per connection instead of once per request (parsing and planning were a sixth of the machine
/// under risk-query load, `docs/PERFORMANCE.md`). Its text must not vary with its values: statements
/// whose text varies with a batch's size stay unprepared. SQLite runs it as any other statement.
protocol PreparedSQL: Sendable {
    /// The name the statement is prepared under on each connection; unique among prepared statements.
    static var name: String { get }
}

extension SQLDatabase {
    /// Runs the statement as plain text, for databases that prepare nothing.
    @discardableResult
    func query<Statement: PreparedSQL>(_ statement: Statement.Type, _ sql: SQL) async throws(StoreError) -> [SQLRow] {
        try await query(sql)
    }
}

/// The text each prepared statement runs with, by name. PostgresNIO asks for a prepared statement's
/// text through a static property, and ours is made by interpolation when it first runs; a later run
/// whose text differs (a statement made to vary) is refused rather than run as the earlier text.
enum PreparedTexts {
    private static let texts = Mutex<[String: String]>([:])

    static func record(_ name: String, _ text: String) throws(StoreError) {
        let recorded = texts.withLock { texts in
            if let recorded = texts[name] { return recorded }
            texts[name] = text
            return text
        }
        guard recorded == text else { throw .corruptRow("prepared statement \(name) was made with another text") }
    }

    static func text(_ name: String) -> String {
        texts.withLock { $0[name] } ?? ""
    }
}
