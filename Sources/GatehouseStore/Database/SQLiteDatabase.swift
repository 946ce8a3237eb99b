import Foundation
import GatehouseCore
import Logging
import NIOPosix
import SQLiteNIO

/// The embedded store: one SQLite file, one connection, every use serialised by a gate.
/// WAL mode and a busy timeout let the `gatehouse` CLI write to the same file while a server runs.
final class SQLiteDatabase: SQLDatabase {
    let connection: SQLiteConnection
    /// Each connection has a thread of its own: SQLite's busy handler sleeps on the calling thread, and
    /// on a shared pool two connections to one file could starve the lock holder of a thread.
    private let threadPool: NIOThreadPool
    private let gate: AsyncGate?

    var dialect: SQLDialect { .sqlite }
    var usage: PoolUsage { PoolUsage(inUse: 0, capacity: 1) }

    private init(connection: SQLiteConnection, threadPool: NIOThreadPool, gate: AsyncGate?) {
        self.connection = connection
        self.threadPool = threadPool
        self.gate = gate
    }

    static func open(path: String, logger: Logger) async throws(StoreError) -> SQLiteDatabase {
        let threadPool = NIOThreadPool(numberOfThreads: 1)
        threadPool.start()
        let connection: SQLiteConnection
        do {
            connection = try await SQLiteConnection.open(
                storage: .file(path: path),
                threadPool: threadPool,
                logger: logger,
                on: MultiThreadedEventLoopGroup.singleton.any()
            )
        } catch {
            try? await threadPool.shutdownGracefully()
            throw Self.translate(error)
        }
        do {
            // The busy timeout comes first: switching to WAL waits for other connections' locks.
            for pragma in ["PRAGMA busy_timeout = \(busyTimeoutMilliseconds)", "PRAGMA journal_mode = WAL", "PRAGMA foreign_keys = ON"] {
                try await retryingWhileBusy { _ = try await connection.query(pragma, []) }
            }
        } catch {
            await SQLiteDatabase(connection: connection, threadPool: threadPool, gate: nil).close()
            throw Self.translate(error)
        }
        return SQLiteDatabase(connection: connection, threadPool: threadPool, gate: AsyncGate())
    }

    /// Switching a new file to WAL needs a moment of exclusive access and SQLite answers "locked" at
    /// once instead of calling the busy handler, so a second process opening the same new file retries,
    /// for as long as the busy timeout (a loaded machine can hold that moment for seconds).
    private static func retryingWhileBusy(_ body: () async throws -> Void) async throws {
        for attempt in 1... {
            do {
                return try await body()
            } catch let error as SQLiteError where attempt < 250 && [.busy, .locked].contains(error.reason) {
                try await Task.sleep(for: .milliseconds(20))
            }
        }
    }

    /// Closes the connection even when the calling task is cancelled (the thread pool refuses work
    /// from a cancelled task, and an unclosed connection is a leaked file handle).
    func close() async {
        let connection = self.connection
        let threadPool = self.threadPool
        await Task.detached {
            try? await connection.close()
            try? await threadPool.shutdownGracefully()
        }.value
    }

    @discardableResult
    func query(_ sql: SQL) async throws(StoreError) -> [SQLRow] {
        do {
            return try await guarded { try await self.run(sql.text, sql.binds) }
        } catch {
            throw Self.translate(error)
        }
    }

    func transaction<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        do {
            return try await guarded {
                let unguarded = SQLiteDatabase(connection: self.connection, threadPool: self.threadPool, gate: nil)
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

    func withMigrationLock<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        // Across processes, each migration's BEGIN IMMEDIATE plus its "already applied?" check inside
        // the transaction is the lock; within this process the gate is. A process migrating on a loaded
        // machine can hold the write lock for longer than a request should wait, so a migrator waits
        // up to a minute (seen: four concurrent migrators under the full test suite passed 5 s).
        try await guarded {
            let unguarded = SQLiteDatabase(connection: self.connection, threadPool: self.threadPool, gate: nil)
            _ = try await self.run("PRAGMA busy_timeout = \(Self.migrationBusyTimeoutMilliseconds)", [])
            do {
                let result = try await body(unguarded)
                _ = try await self.run("PRAGMA busy_timeout = \(Self.busyTimeoutMilliseconds)", [])
                return result
            } catch {
                _ = try? await self.run("PRAGMA busy_timeout = \(Self.busyTimeoutMilliseconds)", [])
                throw error
            }
        }
    }

    static let busyTimeoutMilliseconds = 5000
    static let migrationBusyTimeoutMilliseconds = 60000

    /// One SQLite file has one writer at a time anyway; each statement of `body` waits its turn.
    func ifUnlocked<T: Sendable>(_ key: Int64, _ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T? {
        try await body(self)
    }

    private func guarded<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        guard let gate else { return try await body() }
        return try await gate.withGate(body)
    }

    /// SQLite reads `$3` as a parameter NAMED "$3" and numbers named parameters in order of first
    /// appearance, so a statement using `$4` before `$3` (or skipping one) would bind the wrong values.
    /// `?3` is bound by its number, as PostgreSQL binds `$3`.
    static func numberedParameters(_ sql: String) -> String {
        var utf8 = Array(sql.utf8)
        for index in utf8.indices where utf8[index] == UInt8(ascii: "$") {
            if index + 1 < utf8.count, (0x30...0x39).contains(utf8[index + 1]) { utf8[index] = UInt8(ascii: "?") }
        }
        return String(decoding: utf8, as: UTF8.self)
    }

    private func run(_ sql: String, _ binds: [SQLValue]) async throws -> [SQLRow] {
        let data: [SQLiteData] = try binds.map { bind throws(StoreError) in
            switch bind {
            case .text(let text): .text(text)
            case .int(let int): .integer(.init(int))
            case .bytes(let bytes): .blob(.init(bytes: bytes))
            case .uuid(let uuid): .text(uuid.text)
            case .date(let date): .integer(.init(date.millisecondsSince1970))
            case .null: .null
            case .texts, .ints, .uuids, .dates, .optionalTexts, .optionalBytes: throw .corruptRow("an array bound to SQLite, which binds none")
            }
        }
        let rows = try await connection.query(Self.numberedParameters(sql), data)
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
