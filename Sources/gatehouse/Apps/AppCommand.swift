// Apps: apps with their appKey, the SDK's secretKey and the backend's server secret, and their events.
// Serves every seed: the appKey and secretKey of 000 and 002, the app backend's credential for all of them.

import ArgumentParser
import Foundation
import GatehouseCore
import GatehouseOperations
import GatehouseStore
import Logging

/// App operations at the host, the same operations the admin API runs.
func withAppOperations<T: Sendable>(
    _ common: CommonOptions,
    _ body: @Sendable (AppOperations, ChangeOrigin) async throws -> T
) async throws -> T {
    try await withOperatorStore(common) { store, configuration, origin in
        let box = try configuration.loadSecretBox().box
        try await prepareStore(store, box: box, migrate: false, logger: .init(label: "gatehouse"))
        return try await body(AppOperations(store: store, box: box, clock: SystemClock()), origin)
    }
}

struct AppCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "app",
        abstract: "Manage apps and their keys.",
        subcommands: [Create.self, List.self, RotateSecret.self, Disable.self, Enable.self]
    )

    struct Create: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create an app; prints its appKey and both secrets once.")
        @Option(help: "The app's name.") var name: String
        @Option(parsing: .upToNextOption, help: "Platforms: ios, android, harmony, web.") var platforms: [String]
        @OptionGroup var common: CommonOptions

        func run() async throws {
            let created = try await withAppOperations(common) { operations, origin in
                try await operations.create(name: name, platforms: platforms, origin: origin)
            }
            print("appKey:       \(created.app.appKey)")
            print("secretKey:    \(created.secretKey)    (SDK; shown once)")
            print("serverSecret: \(created.serverSecret)    (app backend; shown once)")
        }
    }

    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List apps.")
        @OptionGroup var common: CommonOptions

        func run() async throws {
            let apps = try await withAppOperations(common) { operations, _ in
                var all: [App] = []
                var after: String?
                repeat {
                    let page = try await operations.list(after: after, limit: 200)
                    all += page.apps
                    after = page.nextAfter?.rawValue
                } while after != nil
                return all
            }
            for app in apps {
                print("\(app.appKey)\t\(app.status.rawValue)\t\(app.platforms.map(\.rawValue).joined(separator: ","))\t\(app.name)")
            }
        }
    }

    struct RotateSecret: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "rotate-secret",
            abstract: "Issue a new sdk or server secret; the old one keeps verifying for the overlap."
        )
        @Argument(help: "The appKey.") var appKey: String
        @Option(help: "sdk or server.") var kind: String
        @Option(help: "Seconds the old secret keeps verifying (0 to 2592000, default 86400).") var overlap: Int?
        @OptionGroup var common: CommonOptions

        func run() async throws {
            let rotated = try await withAppOperations(common) { operations, origin in
                try await operations.rotate(
                    try AppKey(validating: appKey),
                    kind: try SecretKind(validating: kind),
                    overlapSeconds: overlap,
                    origin: origin
                )
            }
            print("\(kind) secret version \(rotated.secret.stored.version): \(rotated.secret.plaintext)    (shown once)")
            if let retires = rotated.previousRetiresAt {
                print("previous version verifies until \(ISO8601DateFormatter().string(from: retires))")
            }
        }
    }

    struct Disable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Disable an app.")
        @Argument(help: "The appKey.") var appKey: String
        @OptionGroup var common: CommonOptions

        func run() async throws { try await AppCommand.changeStatus(appKey, to: .disabled, common) }
    }

    struct Enable: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Enable a disabled app.")
        @Argument(help: "The appKey.") var appKey: String
        @OptionGroup var common: CommonOptions

        func run() async throws { try await AppCommand.changeStatus(appKey, to: .active, common) }
    }

    static func changeStatus(_ appKey: String, to status: AppStatus, _ common: CommonOptions) async throws {
        let app = try await withAppOperations(common) { operations, origin in
            try await operations.setStatus(try AppKey(validating: appKey), to: status, origin: origin)
        }
        print("\(app.appKey) \(app.status.rawValue)")
    }
}

struct EventCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "event",
        abstract: "Manage an app's risk events (IDs 3300 to 3400).",
        subcommands: [Add.self]
    )

    struct Add: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Register an event ID for an app.")
        @Argument(help: "The appKey.") var appKey: String
        @Option(help: "Event ID, 3300 to 3400.") var id: Int
        @Option(help: "The event's name, e.g. login.") var name: String
        @OptionGroup var common: CommonOptions

        func run() async throws {
            let event = try await withAppOperations(common) { operations, origin in
                try await operations.registerEvent(try AppKey(validating: appKey), eventID: id, name: name, origin: origin)
            }
            print("registered event \(event.eventID) '\(event.name)' for \(appKey)")
        }
    }
}
