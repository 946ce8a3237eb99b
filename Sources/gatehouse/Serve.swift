import ArgumentParser
import GatehouseServer
import Hummingbird
import NIOCore
import NIOPosix

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the HTTP service until SIGTERM or SIGINT.")

    @Option(help: "Address to listen on (default 127.0.0.1, or GATEHOUSE_HOSTNAME).")
    var hostname: String?

    @Option(help: "Port to listen on (default 8080, or GATEHOUSE_PORT).")
    var port: Int?

    @OptionGroup var common: CommonOptions

    func run() async throws {
        // Tasks run on the event loops that do the I/O (the HTTP server's and PostgreSQL's, one group),
        // not on Swift's own pool: a risk query's task otherwise crossed threads at each statement of its
        // batch and at its answer, and the server spent about a tenth less CPU a query without those
        // switches (docs/PERFORMANCE.md). Nothing here blocks a thread on another task (SQLite works on
        // its own thread pool), which is what this would turn into a stalled event loop. Before any
        // task of the service starts; the operator commands keep Swift's pool.
        NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        let configuration = try common.configuration(hostname: hostname, port: port)
        let app = try await buildApplication(configuration)
        // runService installs SIGTERM/SIGINT handlers and drains in-flight requests before exiting.
        try await app.runService()
    }
}

struct Migrate: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Apply pending database migrations, each once, in order, under a lock."
    )

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let applied = try await withOperatorStore(common) { store, _, _ in try await store.migrate() }
        print(applied.isEmpty ? "schema is current" : "applied migrations: \(applied.map(String.init).joined(separator: ", "))")
    }
}
