import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseOperations
import GatehouseServer
import GatehouseStore
import GatehouseTestSupport
import HummingbirdTesting
import Testing

/// `gatehouse master-key rotate` on both stores: every stored secret (app secrets, an HS256 attester's
/// key, the signing keys, a role's upstream key) moves to the new key, the cached STS credentials go,
/// and a server started with the new key carries on where the old one stopped; the old key no longer
/// starts one.
@Suite struct MasterKeyRotationTests {
    typealias Flow = DeviceRiskFlowTests
    static let origin = ChangeOrigin(actor: Actor(kind: .cli, name: "test"), requestID: nil, sourceAddress: nil)

    @Test(arguments: TestStoreKind.available)
    func everyStoredSecretMovesToTheNewKey(kind: TestStoreKind) async throws {
        let sts = StubSTS(accessKeyID: "AKIASTUB", secret: "stub-long-term-secret")
        try await sts.serve { stsURL in
            try await withTestDatabase(kind) { database in
                let oldKey = SecretBox.generateBase64MasterKey()
                let newKey = SecretBox.generateBase64MasterKey()
                var configuration = testConfiguration(database)
                configuration.masterKey = oldKey
                let adminToken = try await migratedWithAdminToken(database)

                // Before: an app with an attested device, an HS256 attester, a role with cached credentials.
                let caller = try await Self.serving(configuration, adminToken, database) { server in
                    let caller = try await STSFlowTests.attestedCaller(server)
                    let hs256 = try await server.send(
                        .post,
                        "/v1/admin/apps/\(caller.app.appKey)/attesters",
                        body: #"{"attestId":"shared-key","pow":{"maxNumber":1000},"algorithm":"HS256"}"#
                    )
                    #expect(hs256.status == .created, "\(hs256.json ?? [:])")
                    try await STSFlowTests.createRole(server, caller, "uploads", sts: stsURL)
                    #expect(try await STSFlowTests.token(server, caller, role: "uploads").status == .ok)
                    return caller
                }
                #expect(await sts.callCount == 1)

                let old = try SecretBox(base64MasterKey: oldKey)
                let new = try SecretBox(base64MasterKey: newKey)
                try await StoreService.withStore(database.location, logger: TestDatabase.logger) { store in
                    let operations = MasterKeyOperations(store: store, clock: SystemClock())
                    await #expect(throws: DomainError.self) { try await operations.rotate(from: new, to: old, origin: Self.origin) }
                    await #expect(throws: DomainError.self) { try await operations.rotate(from: old, to: old, origin: Self.origin) }
                    let before = try await store.admin.sealedValues()
                    #expect(try await operations.rotate(from: old, to: new, origin: Self.origin) == before.count)
                    let after = try await store.admin.sealedValues()
                    // The SDK's secret key, the HS256 attester's key, the signing key, the role's key (the server
                    // secret is a hash, with nothing to reseal).
                    #expect(before.count >= 4 && after.count == before.count)
                    #expect(!before.contains { $0.context.contains(":server:") })
                    for value in after {
                        #expect(throws: Never.self) { try new.open(value.sealed, context: value.context) }
                        #expect(throws: DomainError.self) { try old.open(value.sealed, context: value.context) }
                    }
                    let audit = try await store.admin.auditRecords(matching: AuditFilter(), before: nil, limit: 1)
                    #expect(audit.first?.entry.action == "master_key.rotate")
                }

                // The old key no longer passes the start-up check on this database; the new one does,
                // and the issued attestation token and the role still work.
                try await StoreService.withStore(database.location, logger: TestDatabase.logger) { store in
                    await #expect(throws: DomainError.self) { try await prepareStore(store, box: old, migrate: false, logger: TestDatabase.logger) }
                }
                configuration.masterKey = newKey
                try await Self.serving(configuration, adminToken, database) { server in
                    let checked = try await server.send(
                        .post,
                        "/v1/attest/introspect",
                        headers: caller.app.backend,
                        body: #"{"token":"\#(caller.token)","attestId":"login-pow"}"#
                    )
                    #expect(
                        checked.status == .ok && checked.read(Components.Schemas.IntrospectResponse.self)?.active == true,
                        "\(checked.json ?? [:])"
                    )
                    let credentials = try await STSFlowTests.token(server, caller, role: "uploads")
                    #expect(credentials.status == .ok, "\(credentials.json ?? [:])")
                }
                // The sealed credential cache was dropped, so that took a fresh upstream call.
                #expect(await sts.callCount == 2)
            }
        }
    }

    /// Serves the application on `database` with `configuration` while `body` runs.
    @discardableResult
    static func serving<T: Sendable>(
        _ configuration: GatehouseConfiguration,
        _ adminToken: String,
        _ database: TestDatabase,
        _ body: @Sendable (ServerFixture) async throws -> T
    ) async throws -> T {
        let app = try await buildApplication(configuration)
        return try await app.test(.live) { client in
            try await body(ServerFixture(client: client, adminToken: adminToken, store: database))
        }
    }
}
