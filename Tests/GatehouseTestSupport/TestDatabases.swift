import Foundation
import Logging
import PostgresNIO

@testable import GatehouseStore

/// The two stores every contract test runs against. PostgreSQL comes from
/// `GATEHOUSE_TEST_POSTGRES_URL` (`.ci/run` starts a throwaway cluster and sets it); when it is absent
/// the PostgreSQL cases are skipped, unless `GATEHOUSE_REQUIRE_POSTGRES=1` (CI) makes that a failure.
public enum TestStoreKind: String, CaseIterable, Sendable, CustomStringConvertible {
    case sqlite, postgres

    public var description: String { rawValue }

    public static let postgresURL = ProcessInfo.processInfo.environment["GATEHOUSE_TEST_POSTGRES_URL"]
    static let postgresRequired = ProcessInfo.processInfo.environment["GATEHOUSE_REQUIRE_POSTGRES"] == "1"

    /// The kinds to run here.
    public static var available: [TestStoreKind] {
        postgresURL != nil || postgresRequired ? allCases : [.sqlite]
    }
}

/// A fresh, empty database of one kind, dropped by `remove()`.
public struct TestDatabase: Sendable {
    public let kind: TestStoreKind
    public let location: StoreLocation
    private let postgresName: String?
    private let directory: URL?

    public static let logger: Logger = {
        var logger = Logger(label: "gatehouse-test")
        logger.logLevel = .warning
        return logger
    }()

    public static func make(_ kind: TestStoreKind) async throws -> TestDatabase {
        switch kind {
        case .sqlite:
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-test-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            return TestDatabase(
                kind: kind,
                location: .sqlite(path: directory.appendingPathComponent("gatehouse.sqlite").path),
                postgresName: nil,
                directory: directory
            )
        case .postgres:
            guard let adminURL = TestStoreKind.postgresURL else {
                throw TestSetupError("GATEHOUSE_REQUIRE_POSTGRES=1 but GATEHOUSE_TEST_POSTGRES_URL is not set")
            }
            let name = "gh_test_\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(16))"
            try await administer(adminURL, "CREATE DATABASE \(name)")
            var components = URLComponents(string: adminURL)!
            components.path = "/\(name)"
            return TestDatabase(kind: kind, location: .postgres(url: components.string!), postgresName: name, directory: nil)
        }
    }

    /// A second folder for files a test needs beside the database (a master key, say).
    public var scratchDirectory: URL {
        directory ?? FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-scratch-\(postgresName ?? "x")")
    }

    public func remove() async {
        if let directory { try? FileManager.default.removeItem(at: directory) }
        if let postgresName, let adminURL = TestStoreKind.postgresURL {
            try? await Self.administer(adminURL, "DROP DATABASE IF EXISTS \(postgresName) WITH (FORCE)")
        }
    }

    /// Runs one statement that cannot be parameterised (CREATE/DROP DATABASE) on the admin database.
    /// The names are generated here, never from input.
    private static func administer(_ url: String, _ statement: String) async throws {
        try await StoreService.withStore(.postgres(url: url), logger: logger) { store in
            try await store.execute(statement)
        }
    }
}

extension SQLStore {
    /// Runs a statement with no parameters and no result: creating and dropping throwaway databases,
    /// probing the append-only triggers. The service has no such door.
    public func execute(_ statement: String) async throws(StoreError) {
        try await database.query(SQL(unbound: statement))
    }
}

public struct TestSetupError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// Runs `body` with a fresh database of `kind`, removing it afterwards whatever happens.
public func withTestDatabase<T: Sendable>(_ kind: TestStoreKind, _ body: (TestDatabase) async throws -> T) async throws -> T {
    let database = try await TestDatabase.make(kind)
    do {
        let result = try await body(database)
        await database.remove()
        return result
    } catch {
        await database.remove()
        throw error
    }
}

/// Runs `body` with a migrated store on a fresh database of `kind`.
public func withMigratedStore<T: Sendable>(_ kind: TestStoreKind, _ body: @Sendable (SQLStore, TestDatabase) async throws -> T) async throws -> T {
    try await withTestDatabase(kind) { database in
        try await StoreService.withStore(database.location, logger: TestDatabase.logger) { store in
            _ = try await store.migrate()
            return try await body(store, database)
        }
    }
}
