// Admin: operators' admin tokens, the append-only audit log and the master key.
// Serves the operators of every seed's server half; no SDK calls it.

import ArgumentParser
import Foundation
import GatehouseCore
import GatehouseOperations

struct AdminTokenCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "admin-token",
        abstract: "Manage operators' admin tokens (stored hashed; shown once).",
        subcommands: [Create.self, List.self, Revoke.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a token and print it once, alone on stdout.")
        @Option(help: "A name for the token's holder, unique.") var name: String
        @Option(help: "admin (everything, the default) or viewer (reads only).") var role: String = AdminRole.admin.rawValue
        @OptionGroup var common: CommonOptions

        func run() async throws {
            let token = try await withOperatorStore(common) { store, _, origin in
                let role = try AdminRole(validating: role)
                return try await AdminTokenOperations(store: store.admin, clock: SystemClock()).create(name: name, role: role, origin: origin)
            }
            FileHandle.standardError.write(Data("admin token '\(name)' (\(role), shown once):\n".utf8))
            print(token)
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List tokens by name (never the tokens).")
        @OptionGroup var common: CommonOptions

        func run() async throws {
            let tokens = try await withOperatorStore(common) { store, _, _ in
                try await AdminTokenOperations(store: store.admin, clock: SystemClock()).list()
            }
            for token in tokens {
                let state = token.revokedAt.map { "revoked \(ISO8601DateFormatter().string(from: $0))" } ?? "live"
                print("\(token.name)\t\(token.role.rawValue)\tcreated \(ISO8601DateFormatter().string(from: token.createdAt))\t\(state)")
            }
        }
    }

    struct Revoke: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Revoke a token by name; it stops working at once.")
        @Option(help: "The token's name.") var name: String
        @OptionGroup var common: CommonOptions

        func run() async throws {
            try await withOperatorStore(common) { store, _, origin in
                try await AdminTokenOperations(store: store.admin, clock: SystemClock()).revoke(name: name, origin: origin)
            }
            print("revoked \(name)")
        }
    }
}
