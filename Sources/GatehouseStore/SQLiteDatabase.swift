import Foundation
import Logging
import SQLiteNIO

/// The embedded store: one SQLite file, one connection, every use serialised by a gate.
/// WAL mode and a busy timeout let the `gatehouse` CLI write to the same file while a server runs.
final class SQLiteDatabase: SQLDatabase {
    let connection: SQLiteConnection
    private let gate: AsyncGate?

    var dialect: SQLDialect { .sqlite }
    var usage: PoolUsage { PoolUsage(inUse: 0, capacity: 1) }

    private init(connection: SQLiteConnection, gate: AsyncGate?) {
        self.connection = connection
        self.gate = gate
    }

    static func open(path: String, logger: Logger) async throws(StoreError) -> SQLiteDatabase {
        do {
            let connection = try await SQLiteConnection.open(storage: .file(path: path), logger: logger)
            let database = SQLiteDatabase(connection: connection, gate: AsyncGate())
            for pragma in ["PRAGMA journal_mode = WAL", "PRAGMA busy_timeout = 5000", "PRAGMA foreign_keys = ON"] {
                _ = try await connection.query(pragma, [])
            }
            return database
        } catch {
            throw Self.translate(error)
        }
    }

    func close() async {
        try? await connection.close()
    }

    @discardableResult
    func query(_ sql: String, _ binds: [SQLValue]) async throws(StoreError) -> [SQLRow] {
        do {
            return try await guarded { try await self.run(sql, binds) }
        } catch {
            throw Self.translate(error)
        }
    }

    func transaction<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        do {
            return try await guarded {
                let unguarded = SQLiteDatabase(connection: self.connection, gate: nil)
                // IMMEDIATE takes the write lock at once, so a second process waits (busy_timeout)
                // instead of failing halfway through.
                _ = try await self.run("BEGIN IMMEDIATE", [])
                do {
                    let result = try await body(unguarded)
                    _ = try await self.run("COMMIT", [])
                    return result
                } catch {
                    _ = try? await self.run("ROLLBACK", [])
                    throw error
                }
            }
        } catch {
            throw Self.translate(error)
        }
    }

    func withMigrationLock<T: Sendable>(_ body: @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        // Across processes, each migration's BEGIN IMMEDIATE plus its "already applied?" check inside
        // the transaction is the lock; within this process the gate is.
        try await guarded { try await body(SQLiteDatabase(connection: self.connection, gate: nil)) }
    }

    private func guarded<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        guard let gate else { return try await body() }
        return try await gate.withGate(body)
    }

    private func run(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow] {
        let data: [SQLiteData] = binds.map { bind in
            switch bind {
            case .text(let text): .text(text)
            case .int(let int): .integer(.init(int))
            case .bytes(let bytes): .blob(.init(bytes: bytes))
            case .uuid(let uuid): .text(uuid.uuidString.lowercased())
            case .date(let date): .integer(.init(date.millisecondsSince1970))
            case .null: .null
            }
        }
        let rows = try await connection.query(sql, data)
        return rows.map { row in
            var values: [String: SQLValue] = [:]
            for column in row.columns {
                switch column.data {
                case .text(let text): values[column.name] = .text(text)
                case .integer(let int): values[column.name] = .int(Int64(int))
                case .float(let double): values[column.name] = .int(Int64(double))
                case .blob(var buffer): values[column.name] = .bytes(buffer.readBytes(length: buffer.readableBytes) ?? [])
                case .null: values[column.name] = .null
                }
            }
            return SQLRow(values: values)
        }
    }

    static func translate(_ error: any Error) -> StoreError {
        if let error = error as? StoreError { return error }
        if let error = error as? SQLiteError {
            switch error.reason {
            case .constraint, .constraintCheckFailed, .constraintForeignKeyFailed, .constraintNotNullFailed,
                .constraintPrimaryKeyFailed, .constraintTriggerFailed, .constraintUniqueFailed, .constraintUniqueRowIDFailed:
                return .conflict(error.message)
            default:
                return .unavailable(error.message)
            }
        }
        return .unavailable(String(describing: type(of: error)))
    }
}

import GatehouseCore
