import Foundation
import GatehouseCore
import GatehouseOperations
import GatehouseServer
import GatehouseStore
import GatehouseTestSupport
import HTTPTypes
import Testing

/// The server secret kept as its hash: a new app's has no sealed copy, one sealed by an earlier build
/// gets its verifier at the next start (and keeps its sealed copy for the previous build), and both
/// admit the backend.
@Suite struct ServerSecretVerifierTests {
    typealias Flow = DeviceRiskFlowTests

    @Test(arguments: TestStoreKind.available)
    func olderServerSecretsGetTheirVerifierAtStart(kind: TestStoreKind) async throws {
        try await withTestDatabase(kind) { database in
            var configuration = testConfiguration(database)
            let masterKey = try #require(configuration.masterKey)
            let box = try SecretBox(base64MasterKey: masterKey)
            configuration.masterKey = masterKey
            let adminToken = try await migratedWithAdminToken(database)
            let app = try await MasterKeyRotationTests.serving(configuration, adminToken, database) { server in
                try await Flow.createApp(server)
            }
            let legacyText = "gsk_" + String(repeating: "L", count: 40)
            try await StoreService.withStore(database.location, logger: TestDatabase.logger) { store in
                let stored = try #require(try await store.apps.appWithSecrets(withKey: try AppKey(validating: app.appKey)))
                let server = try #require(stored.secrets.first { $0.kind == .server })
                #expect(server.sealed.isEmpty && server.verifier == CredentialDigest.of(app.serverSecret))
                // A version as an earlier build stored it: sealed, no verifier.
                let legacy = SealedSecret(
                    appID: stored.app.id,
                    kind: .server,
                    version: 2,
                    sealed: box.seal(Array(legacyText.utf8), context: SealedSecret.sealingContext(appID: stored.app.id, kind: .server, version: 2)),
                    createdAt: Date(),
                    retiresAt: nil
                )
                let origin = ChangeOrigin(actor: Actor(kind: .cli, name: "test"), requestID: nil, sourceAddress: nil)
                let audit = origin.entry(
                    at: Date(),
                    action: "test",
                    targetType: "app",
                    targetID: app.appKey,
                    appID: stored.app.id,
                    before: nil,
                    after: nil
                )
                try await store.apps.rotateSecret(legacy, retirements: [:], audit: audit)
                #expect(try await store.apps.unhashedServerSecrets(limit: 10).count == 1)
                #expect(try await store.admin.sealedValues().contains { $0.context.hasSuffix(":server:2") })
                #expect(try await prepareStore(store, box: box, migrate: false, logger: TestDatabase.logger))
                #expect(try await store.apps.unhashedServerSecrets(limit: 10).isEmpty)
                let secrets = try await store.apps.secrets(of: stored.app.id)
                #expect(secrets.first { $0.version == 2 }?.verifier == CredentialDigest.of(legacyText))
                #expect(secrets.first { $0.version == 2 }?.sealed.isEmpty == false, "kept for the previous build")
            }
            try await MasterKeyRotationTests.serving(configuration, adminToken, database) { server in
                for secret in [app.serverSecret, legacyText] {
                    let credentials = "Basic " + Data("\(app.appKey):\(secret)".utf8).base64EncodedString()
                    let answer = try await server.send(.get, "/v1/backend/whoami", headers: [.authorization: credentials])
                    #expect(answer.status == .ok, "\(answer.json ?? [:])")
                }
                let wrong = "Basic " + Data("\(app.appKey):\(legacyText)x".utf8).base64EncodedString()
                #expect(try await server.send(.get, "/v1/backend/whoami", headers: [.authorization: wrong]).status == .unauthorized)
            }
        }
    }
}
