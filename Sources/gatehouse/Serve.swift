import ArgumentParser
import GatehouseServer
import Hummingbird

struct Serve: AsyncParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Run the HTTP service until SIGTERM or SIGINT.")

    @Option(help: "Address to listen on (default 127.0.0.1, or GATEHOUSE_HOSTNAME).")
    var hostname: String?

    @Option(help: "Port to listen on (default 8080, or GATEHOUSE_PORT).")
    var port: Int?

    @OptionGroup var common: CommonOptions

    func run() async throws {
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
