import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseOperations
import GatehouseServer
import GatehouseStore
import GatehouseTestSupport
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import NIOCore
import Testing

/// A running server on loopback against a fresh database, with an admin token ready.
struct ServerFixture: Sendable {
    let client: any TestClientProtocol
    let adminToken: String
    let store: TestDatabase

    var baseURL: URL { URL(string: "http://127.0.0.1:\(client.port!)")! }
    var admin: HTTPFields { [.authorization: "Bearer \(adminToken)", .contentType: "application/json"] }

    /// Sends a request (with the admin token unless `headers` says otherwise) and returns the answer.
    func send(
        _ method: HTTPRequest.Method,
        _ uri: String,
        headers: HTTPFields? = nil,
        body: String? = nil,
        rawBody: [UInt8]? = nil
    ) async throws -> TestResponse {
        let bytes = rawBody ?? body.map { Array($0.utf8) }
        let response = try await client.execute(
            uri: uri,
            method: method,
            headers: headers ?? admin,
            body: bytes.map { ByteBuffer(bytes: $0) }
        )
        return TestResponse(status: response.status, headers: response.headers, body: Data(buffer: response.body))
    }
}

/// An answer as a test reads it: decoded into the contract's generated types (`decoded()`), or, for
/// the few checks about the JSON itself (a field that must be absent), as a dictionary.
struct TestResponse: Sendable {
    let status: HTTPResponse.Status
    let headers: HTTPFields
    let body: Data

    static let decoder: JSONDecoder = {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }()

    /// The body as the contract's type `T` (a `Components.Schemas` type); throws if it is not one.
    func decoded<T: Decodable>(_ type: T.Type = T.self) throws -> T {
        try Self.decoder.decode(T.self, from: body)
    }

    /// The body as `T`, or nil if it is not one (for checks inside `#expect`).
    func read<T: Decodable>(_ type: T.Type) -> T? { try? decoded(type) }

    /// The SDK's refusal (numeric code and reason); nil if the body is not one.
    var sdkRefusal: Components.Schemas.SDKError? { try? decoded() }

    /// The problem+json of a refusal; nil if the body is not one.
    var problem: Components.Schemas.Problem? { try? decoded() }

    var json: [String: Any]? { try? JSONSerialization.jsonObject(with: body) as? [String: Any] }
}

/// Builds the real application against a fresh database of `kind`, serves it on a loopback port
/// and runs `body` against it.
func withServer(
    _ kind: TestStoreKind,
    clock: any GatehouseClock = SystemClock(),
    configure: @Sendable (inout GatehouseConfiguration) -> Void = { _ in },
    _ body: @Sendable (ServerFixture) async throws -> Void
) async throws {
    try await withTestDatabase(kind) { database in
        var configuration = testConfiguration(database)
        configure(&configuration)
        let token = try await migratedWithAdminToken(database)
        let app = try await buildApplication(configuration, clock: clock)
        try await app.test(.live) { client in
            try await body(ServerFixture(client: client, adminToken: token, store: database))
        }
    }
}

/// Loopback, any port, a fresh master key, the test database, small bodies.
func testConfiguration(_ database: TestDatabase) -> GatehouseConfiguration {
    var configuration = GatehouseConfiguration(
        hostname: "127.0.0.1",
        port: 0,
        databaseURL: nil,
        dataDirectory: database.scratchDirectory.path,
        masterKey: SecretBox.generateBase64MasterKey(),
        migrateAtStart: true,
        logLevel: .warning,
        trustedProxies: [CIDR("127.0.0.0/8")!],
        maxBodyBytes: 4096,
        stsPrivateEndpoints: true
    )
    if case .postgres(let url) = database.location { configuration.databaseURL = url }
    // A test's client keeps one connection and does not reconnect; under the whole suite's load a
    // pause between two of its requests (the other server's work, in `withTwoServers`) passed the
    // 15 s default, the server closed the connection, and the next request failed with "I/O on
    // closed channel" (SignatureFlowTests, 2026-11-27). No test here is about the idle timeout.
    configuration.idleTimeoutSeconds = 300
    return configuration
}

/// Migrates the database and creates an admin token for the tests to call the admin API with.
func migratedWithAdminToken(_ database: TestDatabase) async throws -> String {
    try await StoreService.withStore(database.location, logger: TestDatabase.logger) { store in
        _ = try await store.migrate()
        return try await AdminTokenOperations(store: store.admin, clock: SystemClock()).create(
            name: "test",
            origin: ChangeOrigin(actor: Actor(kind: .cli, name: "test"), requestID: nil, sourceAddress: nil)
        )
    }
}

/// Two instances of the application against one fresh PostgreSQL database, as a scaled-out deployment
/// runs them; `body` gets one fixture for each.
func withTwoServers(_ body: @Sendable (ServerFixture, ServerFixture) async throws -> Void) async throws {
    try await withTestDatabase(.postgres) { database in
        let configuration = testConfiguration(database)
        let token = try await migratedWithAdminToken(database)
        let first = try await buildApplication(configuration)
        let second = try await buildApplication(configuration)
        try await first.test(.live) { firstClient in
            try await second.test(.live) { secondClient in
                try await body(
                    ServerFixture(client: firstClient, adminToken: token, store: database),
                    ServerFixture(client: secondClient, adminToken: token, store: database)
                )
            }
        }
    }
}
