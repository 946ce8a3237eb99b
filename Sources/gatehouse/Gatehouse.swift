import ArgumentParser
import Configuration
import Foundation
import GatehouseCore
import GatehouseOperations
import GatehouseStore
import Logging

@main
struct Gatehouse: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "gatehouse",
        abstract: "The self-hosted server for mobile app protection.",
        discussion: "Configuration comes from flags, then GATEHOUSE_* environment variables (docs/configuration.md).",
        subcommands: [
            Serve.self, Migrate.self, Purge.self, AdminTokenCommand.self, AppCommand.self, EventCommand.self, AttesterCommand.self, KeysCommand.self,
            RoleCommand.self, MasterKeyCommand.self, VerifyAttestationCommand.self, RulesCommand.self,
        ]
    )
}

/// Flags shared by every command, mapped onto configuration keys ahead of the environment.
struct CommonOptions: ParsableArguments {
    @Option(help: "PostgreSQL URL (overrides GATEHOUSE_DATABASE_URL); SQLite when neither is set.")
    var databaseURL: String?

    @Option(help: "Data directory for SQLite and a development master key (overrides GATEHOUSE_DATA_DIR).")
    var dataDir: String?

    func configuration(hostname: String? = nil, port: Int? = nil) throws -> GatehouseConfiguration {
        var values: [AbsoluteConfigKey: ConfigValue] = [:]
        if let hostname { values["gatehouse.hostname"] = .init(.string(hostname), isSecret: false) }
        if let port { values["gatehouse.port"] = .init(.int(port), isSecret: false) }
        if let databaseURL { values["gatehouse.database.url"] = .init(.string(databaseURL), isSecret: true) }
        if let dataDir { values["gatehouse.data.dir"] = .init(.string(dataDir), isSecret: false) }
        let reader = ConfigReader(providers: [
            InMemoryProvider(name: "flags", values: values),
            EnvironmentVariablesProvider(),
        ])
        return try GatehouseConfiguration(reader: reader)
    }
}

/// Runs `body` with the configured store and the operator at this terminal as the audit actor,
/// printing domain and store refusals as one line instead of a stack of Swift errors.
func withOperatorStore<T: Sendable>(
    _ options: CommonOptions,
    _ body: @Sendable (SQLStore, GatehouseConfiguration, ChangeOrigin) async throws -> T
) async throws -> T {
    let configuration = try options.configuration()
    var logger = Logger(label: "gatehouse")
    logger.logLevel = .warning
    let user = ProcessInfo.processInfo.environment["USER"] ?? "unknown"
    let origin = ChangeOrigin(actor: Actor(kind: .cli, name: user), requestID: nil, sourceAddress: nil)
    do {
        return try await StoreService.withStore(configuration.storeLocation, logger: logger) { store in
            if configuration.databaseURL == nil { _ = try await store.migrate() }
            return try await body(store, configuration, origin)
        }
    } catch let error as DomainError {
        throw OperatorError(description: error.description)
    } catch let error as StoreError {
        throw OperatorError(description: error.description)
    }
}

/// A refusal printed as one line (`Error: code: detail`) with exit status 1.
struct OperatorError: Error, CustomStringConvertible {
    let description: String
}
