@testable import GatehouseStore

/// A test's database around the store's: it forwards what it does not watch to `inner`, so that a
/// wrapper (a race, a count) writes only the statements it watches.
protocol WrappingDatabase: SQLDatabase {
    var inner: any SQLDatabase { get }
}

extension WrappingDatabase {
    var dialect: SQLDialect { inner.dialect }
    var usage: PoolUsage { inner.usage }

    func transaction<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await inner.transaction(body)
    }

    func withMigrationLock<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        try await inner.withMigrationLock(body)
    }

    func ifUnlocked<T: Sendable>(_ key: Int64, _ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T? {
        try await inner.ifUnlocked(key, body)
    }
}
