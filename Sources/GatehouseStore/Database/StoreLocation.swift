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
        case .postgres(let url): return (try? PostgresURL(url).redacted) ?? "postgres:(unparseable URL)"
        }
    }

    /// How long a pooled connection may stay idle before it is closed (reopened on demand).
    static let connectionIdleTimeout = Duration.seconds(5)

    /// Reads a `postgres://` URL, one host or several, into a client configuration per host; the error
    /// names what is wrong, never the password.
    static func postgresConfigurations(
        _ text: String,
        maximumConnections: Int
    ) throws(StoreError) -> (url: PostgresURL, configurations: [PostgresClient.Configuration]) {
        let url = try PostgresURL(text)
        let configurations = url.hosts.map { host in
            let tls: PostgresClient.Configuration.TLS
            switch url.sslmode {
            case "disable": tls = .disable
            case "require": tls = .require(.makeClientConfiguration())
            default: tls = .prefer(.makeClientConfiguration())
            }
            var configuration = PostgresClient.Configuration(
                host: host.name,
                port: host.port,
                username: url.user,
                password: url.password,
                database: url.database,
                tls: tls
            )
            configuration.options.maximumConnections = maximumConnections
            // The pool schedules an idle-timeout and a keep-alive timer each time a connection goes back
            // idle, and cancels them when it is leased again; a cancelled timer's sleep keeps its memory
            // until its deadline, so at thousands of leases a second the defaults (60 s and 30 s) held
            // hundreds of MiB of cancelled timers (docs/PERFORMANCE.md, issue 34). A short idle timeout
            // bounds that to seconds of leases, and makes keep-alive moot: no connection stays idle long
            // enough for a ping, and one that died idle is gone within the timeout.
            configuration.options.connectionIdleTimeout = Self.connectionIdleTimeout
            configuration.options.keepAliveBehavior = nil
            return configuration
        }
        return (url, configurations)
    }
}

/// An open store plus whatever must run for it to work (PostgreSQL's connection pool). Add it to the
/// service group, or use `withStore` for a one-off command.
public struct StoreService: Service {
    public let store: SQLStore
    private let hosts: PostgresHosts?
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
            return StoreService(store: bounded(database), hosts: nil, sqlite: database)
        case .postgres(let url):
            let hosts = try postgresHosts(url, maximumConnections: maximumConnections, operationTimeout: operationTimeout, logger: logger)
            let database = PostgresDatabase(hosts: hosts, capacity: maximumConnections, logger: logger)
            return StoreService(store: bounded(database), hosts: hosts, sqlite: nil)
        }
    }

    /// Each host's three pools: the main one, the group commits' and the probes'.
    private static func postgresHosts(
        _ url: String,
        maximumConnections: Int,
        operationTimeout: Duration,
        logger: Logger
    ) throws(StoreError) -> PostgresHosts {
        let (parsed, configurations) = try StoreLocation.postgresConfigurations(url, maximumConnections: maximumConnections)
        let clients = configurations.map { configuration in
            var configuration = configuration
            configuration.options.connectTimeout = operationTimeout
            return PostgresClient(configuration: configuration, backgroundLogger: logger)
        }
        // The group commits' own connections: their batches' read is a prepared statement that must keep
        // one plan for any values, which on the main pool each batch had to ask for (`SET LOCAL`) in a
        // round trip of its own; the main pool's statements keep PostgreSQL's own choice. Without JIT:
        // with a million rows of an attack's history the read's generic plan is costed past
        // `jit_above_cost`, and PostgreSQL compiled it anew on every run (140 ms of a 230 ms query,
        // where the read itself took under 4 ms; docs/PERFORMANCE.md).
        let batchClients = configurations.map { configuration in
            var configuration = configuration
            configuration.options.connectTimeout = operationTimeout
            configuration.options.maximumConnections = PostgresHosts.batchConnections
            configuration.options.additionalStartupParameters = [("plan_cache_mode", "force_generic_plan"), ("jit", "off")]
            return PostgresClient(configuration: configuration, backgroundLogger: logger)
        }
        // Connections of their own for the probes, opened only where hosts are probed (multi-host
        // URLs that ask for a writable host): a probe never waits behind the main pool's leases.
        // Two: the watch's and a search's may ask the same host at once.
        let probeClients = configurations.map { configuration in
            var configuration = configuration
            configuration.options.connectTimeout = PostgresHosts.probeTimeout
            configuration.options.maximumConnections = 2
            return PostgresClient(configuration: configuration, backgroundLogger: logger)
        }
        return PostgresHosts(
            clients: clients,
            batchClients: batchClients,
            probeClients: probeClients,
            names: parsed.hosts.map { "\($0.name):\($0.port)" },
            attributes: parsed.sessionAttributes,
            logger: logger
        )
    }

    /// Runs the pool until graceful shutdown or cancellation, adding the console's counters to the
    /// database every few seconds; then writes the decisions and counts still held in memory and
    /// closes the database. (Services shut down in reverse order, so the HTTP server has stopped
    /// answering by then.)
    public func run() async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            if let hosts { Self.runPools(of: hosts, in: &group) }
            group.addTask { [store] in
                while !Task.isCancelled {
                    try? await Task.sleep(for: Self.activityFlushInterval)
                    try? await store.console.flushActivity()
                }
            }
            try? await gracefulShutdown()
            await store.deviceRisk.catchUpWritesBehind()
            try? await store.console.flushActivity()
            group.cancelAll()
        }
        await sqlite?.close()
    }

    /// Closes a store that will not run (a start refused after it opened).
    public func close() async {
        await sqlite?.close()
    }

    /// How often the console's counters reach the database: what a crash can lose of them.
    public static let activityFlushInterval = Duration.seconds(5)

    /// Opens the store, runs `body` with it, and closes it: for commands and tests. An operator's
    /// command may hold one transaction long (re-sealing every secret), so its bound is ten minutes.
    public static func withStore<T: Sendable>(
        _ location: StoreLocation,
        logger: Logger,
        _ body: @Sendable (SQLStore) async throws -> T
    ) async throws -> T {
        let service = try await open(location, maximumConnections: 4, operationTimeout: .seconds(600), logger: logger)
        guard let hosts = service.hosts else {
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
            Self.runPools(of: hosts, in: &group)
            defer { group.cancelAll() }
            return try await body(service.store)
        }
    }
}

extension StoreService {
    /// Each host's pool, and the watch that follows the writable host (multi-host URLs only).
    static func runPools(of hosts: PostgresHosts, in group: inout ThrowingTaskGroup<Void, any Error>) {
        for client in hosts.clients + hosts.batchClients + hosts.probeClients { group.addTask { await client.run() } }
        group.addTask { await hosts.watch() }
    }
}
