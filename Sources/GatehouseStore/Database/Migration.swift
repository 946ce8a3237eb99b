import Foundation

/// One versioned schema change, read from `Migrations/NNNN_name.<dialect>.sql`.
struct Migration: Sendable, Equatable {
    let version: Int
    let name: String
    let statements: [String]

    /// Parses `0001_foundation.postgres.sql` into version 1, name "foundation", for the dialect asked.
    static func parse(fileName: String, contents: String, dialect: SQLDialect) -> Migration? {
        let suffix = ".\(dialect.rawValue).sql"
        guard fileName.hasSuffix(suffix) else { return nil }
        let stem = fileName.dropLast(suffix.count)
        guard let underscore = stem.firstIndex(of: "_"), let version = Int(stem[..<underscore]), version > 0 else { return nil }
        return Migration(
            version: version,
            name: String(stem[stem.index(after: underscore)...]),
            statements: splitStatements(contents)
        )
    }

    /// Splits a file into statements at lines ending in `;`, except inside `$$` bodies. The drivers run
    /// one statement per call, and migration files keep each statement's end at a line end.
    static func splitStatements(_ sql: String) -> [String] {
        var statements: [String] = []
        var current: [Substring] = []
        var insideDollarQuote = false
        for line in sql.split(separator: "\n", omittingEmptySubsequences: false) {
            let trimmed = line.trimmingCharacters(in: .whitespaces)
            if current.isEmpty && (trimmed.isEmpty || trimmed.hasPrefix("--")) { continue }
            current.append(line)
            if line.components(separatedBy: "$$").count % 2 == 0 { insideDollarQuote.toggle() }
            if !insideDollarQuote && trimmed.hasSuffix(";") {
                statements.append(current.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines))
                current = []
            }
        }
        let rest = current.joined(separator: "\n").trimmingCharacters(in: .whitespacesAndNewlines)
        if !rest.isEmpty { statements.append(rest) }
        return statements
    }

    /// Every migration shipped with this build for `dialect`, in version order. Read from the resource
    /// bundle once per process: readiness probes ask for it on every call.
    static func bundled(for dialect: SQLDialect) throws(StoreError) -> [Migration] {
        try (dialect == .postgres ? bundledPostgres : bundledSQLite).get()
    }

    private static let bundledPostgres = Result { () throws(StoreError) in try readBundle(for: .postgres) }
    private static let bundledSQLite = Result { () throws(StoreError) in try readBundle(for: .sqlite) }

    private static func readBundle(for dialect: SQLDialect) throws(StoreError) -> [Migration] {
        guard let folder = Bundle.module.url(forResource: "Migrations", withExtension: nil),
            let files = try? FileManager.default.contentsOfDirectory(atPath: folder.path)
        else { throw .migrationFailed(version: 0, reason: "the Migrations resource folder is missing from this build") }
        var migrations: [Migration] = []
        for file in files {
            guard let contents = try? String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8),
                let migration = parse(fileName: file, contents: contents, dialect: dialect)
            else { continue }
            migrations.append(migration)
        }
        migrations.sort { $0.version < $1.version }
        for (previous, next) in zip(migrations, migrations.dropFirst()) where previous.version == next.version {
            throw .migrationFailed(version: next.version, reason: "two migrations share version \(next.version)")
        }
        return migrations
    }
}

/// Applies pending migrations in order, each once, each in its own transaction, recorded in
/// `gatehouse_migrations`; the whole run holds the migration lock.
struct Migrator: Sendable {
    let database: any SQLDatabase
    let migrations: [Migration]

    init(database: any SQLDatabase) throws(StoreError) {
        self.database = database
        self.migrations = try Migration.bundled(for: database.dialect)
    }

    init(database: any SQLDatabase, migrations: [Migration]) {
        self.database = database
        self.migrations = migrations
    }

    /// - Returns: the versions this run applied (empty when the schema was already current).
    func migrate() async throws -> [Int] {
        let migrations = self.migrations
        let createTable = database.dialect == .postgres ? Self.createTablePostgres : Self.createTableSQLite
        return try await database.withMigrationLock { locked in
            try await locked.query(createTable)
            var applied: [Int] = []
            for migration in migrations {
                let didApply = try await locked.transaction { transaction in
                    let existing = try await transaction.query(
                        "SELECT version FROM gatehouse_migrations WHERE version = \(.int(Int64(migration.version)))"
                    )
                    guard existing.isEmpty else { return false }
                    for statement in migration.statements {
                        do {
                            try await transaction.query(SQL(unbound: statement))
                        } catch {
                            throw StoreError.migrationFailed(version: migration.version, reason: "\(error)")
                        }
                    }
                    try await transaction.query(
                        """
                        INSERT INTO gatehouse_migrations (version, name, applied_at) VALUES (\(.int(Int64(migration.version))),
                          \(.text(migration.name)), \(.date(Date())))
                        """
                    )
                    return true
                }
                if didApply { applied.append(migration.version) }
            }
            return applied
        }
    }

    /// Versions recorded as applied, in order: a plain read, without the migration lock, so readiness
    /// probes neither wait for a running migration nor queue behind each other.
    func appliedVersions() async throws -> [Int] {
        let exists: SQL =
            database.dialect == .postgres
            ? "SELECT 1 AS present FROM pg_tables WHERE schemaname = current_schema() AND tablename = 'gatehouse_migrations'"
            : "SELECT 1 AS present FROM sqlite_master WHERE type = 'table' AND name = 'gatehouse_migrations'"
        guard try await !database.query(exists).isEmpty else { return [] }
        return try await database.query("SELECT version FROM gatehouse_migrations ORDER BY version").map {
            Int(try $0.int("version"))
        }
    }

    /// What the database has applied and what this build ships that it has not.
    func status() async throws -> SchemaStatus {
        let applied = try await appliedVersions()
        let done = Set(applied)
        return SchemaStatus(applied: applied, pending: migrations.map(\.version).filter { !done.contains($0) })
    }

    static let createTablePostgres: SQL = """
        CREATE TABLE IF NOT EXISTS gatehouse_migrations (
            version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL)
        """
    static let createTableSQLite: SQL = """
        CREATE TABLE IF NOT EXISTS gatehouse_migrations (
            version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL) STRICT
        """
}
