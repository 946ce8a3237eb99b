import Atomics
import Foundation
import GatehouseCore
import Logging
import NIOCore
import PostgresNIO

/// PostgreSQL through PostgresNIO's `PostgresClient` pools, one per host of the URL; statements go to
/// the host `PostgresHosts` chose (the writable one, when the URL asks for it).
final class PostgresDatabase: SQLDatabase {
    /// Taken for the whole of a migration run, so two instances starting at once apply each migration once.
    static let migrationLockKey: Int64 = 0x6761_7465_686f_7573  // "gatehous"

    let hosts: PostgresHosts
    let logger: Logger
    private let inFlight = ManagedAtomic<Int>(0)
    private let capacity: Int
    /// Whether this is the group commits' side (`forBatches`): each host's batch pool, not its main one.
    private let batches: Bool
    /// The batch side, with an in-flight count of its own; nil on the batch side itself.
    private let batchSide: PostgresDatabase?

    var dialect: SQLDialect { .postgres }

    init(hosts: PostgresHosts, capacity: Int, logger: Logger, batches: Bool = false) {
        self.hosts = hosts
        self.capacity = capacity
        self.logger = logger
        self.batches = batches
        batchSide = batches ? nil : PostgresDatabase(hosts: hosts, capacity: PostgresHosts.batchConnections, logger: logger, batches: true)
    }

    var usage: PoolUsage { PoolUsage(inUse: inFlight.load(ordering: .relaxed), capacity: capacity) }
    var forBatches: any SQLDatabase { batchSide ?? self }
    var plansGenerically: Bool { batches }

    /// Runs `work` on the chosen host. A failure saying the host is gone or read-only makes the hosts
    /// search again; work that failed before it could change anything (refused as read-only, never
    /// given a connection, a transaction that never reached its commit) runs once more on the host
    /// found, within the caller's bound. Anything else is the caller's error: its outcome is unknown.
    private func onChosenHost<T>(_ work: (PostgresClient) async throws -> T) async throws -> T {
        inFlight.wrappingIncrement(ordering: .relaxed)
        defer { inFlight.wrappingDecrement(ordering: .relaxed) }
        var retried = false
        while true {
            let (index, main) = try await hosts.current()
            let client = batches ? hosts.batchClients[index] : main
            do {
                return try await work(client)
            } catch {
                let failure = HostFailure(error)
                if failure.hostUnusable { hosts.suspect(index, because: failure.reason) }
                guard failure.nothingChanged, failure.hostUnusable, hosts.needsSearch, !retried else { throw error }
                retried = true
            }
        }
    }

    @discardableResult
    func query(_ sql: SQL) async throws(StoreError) -> [SQLRow] {
        let logger = logger
        do {
            return try await onChosenHost { client in try await Self.run(sql.text, sql.binds) { try await client.query($0, logger: logger) } }
        } catch {
            throw Self.translate(error)
        }
    }

    @discardableResult
    func query<Statement: PreparedSQL>(_ statement: Statement.Type, _ sql: SQL) async throws(StoreError) -> [SQLRow] {
        let logger = logger
        do {
            try PreparedTexts.record(Statement.name, sql.text)
            return try await onChosenHost { client in
                try await Self.decodeAll(try await client.execute(PostgresPrepared<Statement>(bindings: Self.bindings(sql.binds)), logger: logger))
            }
        } catch {
            throw Self.translate(error)
        }
    }

    func transaction<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        let logger = logger
        do {
            return try await pinnedConnection { pinned in
                try await pinned.connection.withTransaction(logger: logger) { connection in
                    try await body(PostgresConnectionDatabase(connection: connection, logger: logger, plansGenerically: pinned.plansGenerically))
                }
            }
        } catch let error as PostgresTransactionError {
            throw Self.translate(error.closureError ?? error.beginError ?? error.commitError ?? error)
        } catch {
            throw Self.translate(error)
        }
    }

    func onOneConnection<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        do {
            return try await pinnedConnection { pinned in try await body(pinned) }
        } catch {
            throw Self.translate(error)
        }
    }

    private func pinnedConnection<T: Sendable>(_ body: @escaping @Sendable (PostgresConnectionDatabase) async throws -> T) async throws -> T {
        let (logger, batches) = (logger, batches)
        return try await onChosenHost { client in
            try await client.withConnection { connection in
                // A batch's statements and what it computes between them run on the connection's loop.
                try await withTaskExecutorPreference(batches ? EventLoopTaskExecutor(connection.eventLoop) : nil) {
                    try await body(PostgresConnectionDatabase(connection: connection, logger: logger, plansGenerically: batches))
                }
            }
        }
    }

    func withMigrationLock<T: Sendable>(_ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T {
        // Not retried on another host: a migration that lost its host mid-way starts again at the next start.
        do {
            return try await hosts.current().client.withConnection { connection in
                let pinned = PostgresConnectionDatabase(connection: connection, logger: logger)
                try await pinned.query("SELECT pg_advisory_lock(\(.int(Self.migrationLockKey)))")
                do {
                    let result = try await body(pinned)
                    try await pinned.query("SELECT pg_advisory_unlock(\(.int(Self.migrationLockKey)))")
                    return result
                } catch {
                    _ = try? await pinned.query("SELECT pg_advisory_unlock(\(.int(Self.migrationLockKey)))")
                    throw error
                }
            }
        } catch {
            throw Self.translate(error)
        }
    }

    func ifUnlocked<T: Sendable>(_ key: Int64, _ body: @escaping @Sendable (any SQLDatabase) async throws -> T) async throws -> T? {
        do {
            let logger = logger
            return try await onChosenHost { client in
                try await client.withConnection { connection in
                    try await Self.ifUnlocked(key, on: PostgresConnectionDatabase(connection: connection, logger: logger), body)
                }
            }
        } catch {
            throw Self.translate(error)
        }
    }

    private static func ifUnlocked<T: Sendable>(
        _ key: Int64,
        on pinned: PostgresConnectionDatabase,
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> T
    ) async throws -> T? {
        let locked = try await pinned.query("SELECT pg_try_advisory_lock(\(.int(key))) AS locked")
        guard try locked.first?.int("locked") == 1 else { return nil }
        do {
            let result = try await body(pinned)
            try await pinned.query("SELECT pg_advisory_unlock(\(.int(key)))")
            return result
        } catch {
            _ = try? await pinned.query("SELECT pg_advisory_unlock(\(.int(key)))")
            throw error
        }
    }

    static func run(
        _ sql: String,
        _ binds: [SQLValue],
        _ execute: (PostgresQuery) async throws -> PostgresRowSequence
    ) async throws -> [SQLRow] {
        let rows = try await execute(PostgresQuery(unsafeSQL: sql, binds: bindings(binds))).collect()
        return try rows.map(Self.decode)
    }

    static func bindings(_ binds: [SQLValue]) -> PostgresBindings {
        var bindings = PostgresBindings(capacity: binds.count)
        for bind in binds {
            switch bind {
            case .text(let text): bindings.append(text)
            case .int(let int): bindings.append(int)
            case .bytes(let bytes): bindings.append(ByteBuffer(bytes: bytes))
            case .uuid(let uuid): bindings.append(uuid)
            case .date(let date): bindings.append(date)
            case .null: bindings.appendNull()
            case .texts(let texts): bindings.append(texts)
            case .ints(let ints): bindings.append(ints)
            case .uuids(let uuids): bindings.append(uuids)
            case .dates(let dates): bindings.append(dates)
            case .optionalTexts(let texts): bindings.append(PostgresNullableArray(texts))
            case .optionalBytes(let bytes): bindings.append(PostgresNullableArray(bytes.map { $0.map { ByteBuffer(bytes: $0) } }))
            }
        }
        return bindings
    }

    static func decodeAll<Rows: AsyncSequence>(_ rows: Rows) async throws -> [SQLRow] where Rows.Element == PostgresRow {
        var decoded: [SQLRow] = []
        for try await row in rows { decoded.append(try decode(row)) }
        return decoded
    }

    private static func decode(_ row: PostgresRow) throws -> SQLRow {
        var values: [String: SQLValue] = [:]
        for cell in row {
            guard cell.bytes != nil, cell.dataType != .void else {
                values[cell.columnName] = .null
                continue
            }
            switch cell.dataType {
            case .text, .varchar, .name, .bpchar:
                values[cell.columnName] = .text(try cell.decode(String.self))
            case .int2, .int4, .int8:
                values[cell.columnName] = .int(try cell.decode(Int64.self))
            case .bytea:
                var buffer = try cell.decode(ByteBuffer.self)
                values[cell.columnName] = .bytes(buffer.readBytes(length: buffer.readableBytes) ?? [])
            case .bool:
                values[cell.columnName] = .int(try cell.decode(Bool.self) ? 1 : 0)
            case .uuid:
                values[cell.columnName] = .uuid(try cell.decode(UUID.self))
            case .timestamptz, .timestamp:
                // Gatehouse keeps milliseconds; rounding undoes the float error of the microsecond round trip.
                let seconds = try cell.decode(Date.self).timeIntervalSince1970
                values[cell.columnName] = .date(Date(millisecondsSince1970: Int64((seconds * 1000).rounded())))
            case .jsonb, .json:
                values[cell.columnName] = .text(try cell.decode(String.self))
            default:
                throw StoreError.corruptRow("column \(cell.columnName) has unexpected type \(cell.dataType)")
            }
        }
        return SQLRow(values: values)
    }

    static func translate(_ error: any Error) -> StoreError {
        if let error = error as? StoreError { return error }
        if let error = error as? PSQLError {
            if let state = error.serverInfo?[.sqlState] {
                let detail = error.serverInfo?[.constraintName] ?? error.serverInfo?[.message] ?? state
                // Class 23: integrity constraint violations. The write did not happen.
                if state.hasPrefix("23") { return .conflict(detail) }
                return .unavailable("SQLSTATE \(state): \(error.serverInfo?[.message] ?? "")")
            }
            return .unavailable(String(describing: error.code))
        }
        return .unavailable(String(describing: type(of: error)))
    }
}
