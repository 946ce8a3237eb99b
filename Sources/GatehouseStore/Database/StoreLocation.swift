import Foundation
import GatehouseCore
import Logging
import NIOSSL
import PostgresNIO
import ServiceLifecycle

/// Where the data lives: an embedded SQLite file, or a PostgreSQL server named by URL.
public enum StoreLocation: Sendable, Equatable, CustomStringConvertible {
    case sqlite(path: String)
    /// `postgres://user:password@host:port/database?sslmode=disable|prefer|require`
    case postgres(url: String)

    /// Never prints a password: this string goes to logs.
    public var description: String {
        switch self {
        case .sqlite(let path): return "sqlite:\(path)"
        case .postgres(let url):
            guard var components = URLComponents(string: url) else { return "postgres:(unparseable URL)" }
            if components.password != nil { components.password = "***" }
            return components.string ?? "postgres"
        }
    }

    /// Reads a `postgres://` URL into a client configuration; the error names what is wrong, never the password.
    static func postgresConfiguration(_ url: String, maximumConnections: Int) throws(StoreError) -> PostgresClient.Configuration {
        guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme ?? "") else {
            throw .unavailable("GATEHOUSE_DATABASE_URL must look like postgres://user:password@host:5432/database")
        }
        guard let user = components.user, !user.isEmpty else { throw .unavailable("the database URL names no user") }
        let database = components.path.hasPrefix("/") ? String(components.path.dropFirst()) : components.path
        let query = Dictionary(
            (components.queryItems ?? []).map { ($0.name, $0.value ?? "") },
            uniquingKeysWith: { _, last in last }
        )
        let tls: PostgresClient.Configuration.TLS
        switch query["sslmode"] ?? "prefer" {
        case "disable": tls = .disable
        case "prefer": tls = .prefer(.makeClientConfiguration())
        case "require": tls = .require(.makeClientConfiguration())
        case let other: throw .unavailable("sslmode '\(other)' is not one of disable, prefer, require")
        }
        var configuration = PostgresClient.Configuration(
            host: components.host ?? "127.0.0.1",
            port: components.port ?? 5432,
            username: RequestPath.percentDecoded(user) ?? user,
            password: components.password.flatMap { RequestPath.percentDecoded($0) },
            database: database.isEmpty ? nil : database,
            tls: tls
        )
        configuration.options.maximumConnections = maximumConnections
        return configuration
    }
}

/// An open store plus whatever must run for it to work (PostgreSQL's connection pool). Add it to the
/// service group, or use `withStore` for a one-off command.
public struct StoreService: Service {
    public let store: SQLStore
    private let client: PostgresClient?
    private let sqlite: SQLiteDatabase?

    /// - Parameter operationTimeout: the longest any statement or transaction may keep its caller
    ///   waiting (`BoundedDatabase`); also the time to open a connection.
    public static func open(
        _ location: StoreLocation,
        maximumConnections: Int = 20,
        operationTimeout: Duration = .seconds(5),
        logger: Logger
    ) async throws(StoreError)
        -> StoreService
    {
        func bounded(_ database: any SQLDatabase) -> SQLStore {
            SQLStore(
                database: BoundedDatabase(inner: database, limit: operationTimeout, maintenanceLimit: .seconds(300)),
                queueWait: operationTimeout * 2
            )
        }
        switch location {
        case .sqlite(let path):
            // Every command may be the first to run in a new data folder, not only `serve`.
            let folder = (path as NSString).deletingLastPathComponent
            do {
                if !folder.isEmpty { try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true) }
            } catch {
                throw .unavailable("cannot create the data folder \(folder): \(error.localizedDescription)")
            }
            let database = try await SQLiteDatabase.open(path: path, logger: logger)
            return StoreService(store: bounded(database), client: nil, sqlite: database)
        case .postgres(let url):
            var configuration = try StoreLocation.postgresConfiguration(url, maximumConnections: maximumConnections)
            configuration.options.connectTimeout = operationTimeout
            let client = PostgresClient(configuration: configuration, backgroundLogger: logger)
            let database = PostgresDatabase(client: client, capacity: maximumConnections, logger: logger)
            return StoreService(store: bounded(database), client: client, sqlite: nil)
        }
    }

    /// Runs the pool until graceful shutdown or cancellation, then writes the decisions still queued
    /// behind their answers and closes the database. (Services shut down in reverse order, so the
    /// HTTP server has stopped answering by then.)
    public func run() async throws {
        if let client {
            await withTaskGroup(of: Void.self) { group in
                group.addTask { await client.run() }
                try? await gracefulShutdown()
                await store.catchUpWritesBehind()
                group.cancelAll()
            }
        } else {
            try? await gracefulShutdown()
            await store.catchUpWritesBehind()
            await sqlite?.close()
        }
    }

    /// Opens the store, runs `body` with it, and closes it: for commands and tests. An operator's
    /// command may hold one transaction long (re-sealing every secret), so its bound is ten minutes.
    public static func withStore<T: Sendable>(
        _ location: StoreLocation,
        logger: Logger,
        _ body: @Sendable (SQLStore) async throws -> T
    ) async throws -> T {
        let service = try await open(location, maximumConnections: 4, operationTimeout: .seconds(600), logger: logger)
        guard let client = service.client else {
            do {
                let result = try await body(service.store)
                await service.sqlite?.close()
                return result
            } catch {
                await service.sqlite?.close()
                throw error
            }
        }
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(service.store)
        }
    }
}
