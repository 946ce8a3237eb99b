import Foundation
import GatehouseCore
import GatehouseTestSupport
import Testing

@testable import GatehouseStore

/// The device keys hardware attestation vouched for, on both stores: kept once, read back whole, and
/// a counter that moves forward once per value however many instances race.
struct AttestedKeyStoreTests {
    let origin = ChangeOrigin(actor: Actor(kind: .cli, name: "test"), requestID: "req-1", sourceAddress: "127.0.0.1")
    let now = Date(millisecondsSince1970: 1_800_000_000_123)

    func seed(_ store: SQLStore) async throws -> AttestedDeviceKey {
        var generator = SystemRandomNumberGenerator()
        let app = try AppDraft(name: "Shop", platforms: ["ios"]).makeApp(at: now, using: &generator)
        let audit = origin.entry(at: now, action: "app.create", targetType: "app", targetID: "x", appID: app.id, before: nil, after: nil)
        try await store.apps.createApp(app, secrets: [], audit: audit)
        return AttestedDeviceKey(
            appID: app.id,
            keyID: "2o0syRGn1HDKDv85d522XBC9nLqrHWHGnt_mJ5hWMQM",
            platform: .appAttest,
            attestID: try AttestID(validating: "hardware"),
            deviceID: DeviceID(bytes: Array(repeating: 7, count: 16)),
            publicKey: Array(repeating: 4, count: 65),
            counter: 0,
            facts: HardwareFacts(app: "com.example.shop", securityLevel: .secureEnclave, environment: "production"),
            receipt: Array("receipt".utf8),
            attestedAt: now,
            lastUsedAt: now
        )
    }

    @Test(arguments: TestStoreKind.available)
    func aKeyIsKeptOnceAndReadBackWhole(kind: TestStoreKind) async throws {
        try await withMigratedStore(kind) { (store, _) async throws in
            let key = try await seed(store)
            #expect(try await store.attestation.insertAttestedKey(key, sighting: nil))
            var replayed = key
            replayed.counter = 0
            #expect(try await store.attestation.insertAttestedKey(replayed, sighting: nil) == false)
            #expect(try await store.attestation.attestedKey(appID: key.appID, keyID: key.keyID) == key)
            #expect(try await store.attestation.attestedKey(appID: key.appID, keyID: "another") == nil)
        }
    }

    @Test(arguments: TestStoreKind.available)
    func theCounterOnlyMovesForward(kind: TestStoreKind) async throws {
        try await withMigratedStore(kind) { (store, _) async throws in
            let key = try await seed(store)
            #expect(try await store.attestation.insertAttestedKey(key, sighting: nil))
            let later = now.addingTimeInterval(60)
            #expect(try await store.attestation.advanceCounter(appID: key.appID, keyID: key.keyID, to: 1, at: later))
            #expect(try await store.attestation.advanceCounter(appID: key.appID, keyID: key.keyID, to: 1, at: later) == false)
            #expect(try await store.attestation.advanceCounter(appID: key.appID, keyID: key.keyID, to: 5, at: later))
            #expect(try await store.attestation.advanceCounter(appID: key.appID, keyID: key.keyID, to: 3, at: later) == false)
            #expect(try await store.attestation.advanceCounter(appID: key.appID, keyID: "unknown", to: 9, at: later) == false)
            let stored = try await store.attestation.attestedKey(appID: key.appID, keyID: key.keyID)
            #expect(stored?.counter == 5 && stored?.lastUsedAt == later)
        }
    }

    /// One assertion replayed 64 times at once through two stores on one database, as through two
    /// instances: it passes once.
    @Test(arguments: TestStoreKind.available)
    func concurrentAssertionsWithOneCounterPassOnce(kind: TestStoreKind) async throws {
        try await withMigratedStore(kind) { (store, database) async throws in
            let key = try await seed(store)
            #expect(try await store.attestation.insertAttestedKey(key, sighting: nil))
            try await StoreService.withStore(database.location, logger: TestDatabase.logger) { (second) async throws in
                let passed = try await withThrowingTaskGroup(of: Bool.self) { group in
                    for index in 0..<64 {
                        let instance = index.isMultiple(of: 2) ? store : second
                        group.addTask { try await instance.attestation.advanceCounter(appID: key.appID, keyID: key.keyID, to: 1, at: now) }
                    }
                    return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
                }
                #expect(passed == 1)
            }
        }
    }
}
