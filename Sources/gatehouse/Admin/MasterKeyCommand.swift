import ArgumentParser
import Foundation
import GatehouseCore
import GatehouseOperations
import GatehouseStore

struct MasterKeyCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "master-key",
        abstract: "The master key that seals stored secrets.",
        subcommands: [Rotate.self]
    )

    struct Rotate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Re-seal every stored secret with a new master key, in one transaction.",
            discussion: """
                Stop every instance first: one still holding the old key cannot read the re-sealed secrets. \
                Then start them with the new key. Device identities and device keys are derived from the \
                master key and change with it (docs/operations.md, "Rotating the master key").
                """
        )
        @Option(help: "A file holding the new key: base64 of 32 random bytes (head -c 32 /dev/urandom | base64).")
        var newKeyFile: String
        @OptionGroup var common: CommonOptions

        func run() async throws {
            guard let text = try? String(contentsOfFile: newKeyFile, encoding: .utf8) else {
                throw OperatorError(description: "cannot read \(newKeyFile)")
            }
            let next: SecretBox
            do { next = try SecretBox(base64MasterKey: text) } catch { throw OperatorError(description: error.description) }
            let count = try await withOperatorStore(common) { store, configuration, origin in
                let current = try configuration.loadSecretBox().box
                let moved = try await MasterKeyOperations(store: store, clock: SystemClock()).rotate(from: current, to: next, origin: origin)
                // SQLite's development key lives in the data folder: keep it the one that opens the data.
                if configuration.databaseURL == nil, configuration.masterKey == nil, configuration.masterKeyFile == nil {
                    let path = (configuration.dataDirectory as NSString).appendingPathComponent("master.key")
                    try Data((text.trimmingCharacters(in: .whitespacesAndNewlines) + "\n").utf8).write(
                        to: URL(fileURLWithPath: path),
                        options: .atomic
                    )
                    try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)
                }
                return moved
            }
            print("re-sealed \(count) stored secrets with the new master key; start every instance with it now")
        }
    }
}
