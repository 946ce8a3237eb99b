import Crypto
import Foundation
import GatehouseCore
import GatehouseStore
import Synchronization

/// The service's ES256 keys, read from the store and kept for a short while, so that signing and
/// verifying do not read the database per request. Every instance sees a rotation within
/// `refreshInterval`; until then it signs with the retired key, which stays published (see
/// `SigningKey.retiredKeyPublication`).
public actor SigningKeyRing {
    public static let refreshInterval: TimeInterval = 30

    private let store: any AttestationStore
    private let box: SecretBox
    private let clock: any GatehouseClock
    /// The keys as last loaded and when, readable without entering the actor: every gated request
    /// looks its token's key up, and entering the actor was a task switch a request. Written only by
    /// `reload`, on the actor.
    private let lastLoaded = Mutex<(keys: [SigningKey], at: Date?)>(([], nil))
    private var loadedAt: Date? { lastLoaded.withLock { $0.at } }

    public init(store: any AttestationStore, box: SecretBox, clock: any GatehouseClock) {
        self.store = store
        self.box = box
        self.clock = clock
    }

    /// The key that signs now; creates the first one if the database has none.
    public func active() async throws -> SigningKey {
        if let key = try await current().first(where: { $0.retiredAt == nil }) { return key }
        let first = SigningKey.generate(at: clock.now())
        _ = try await store.insertFirstSigningKey(stored(first))
        return try await reload().first(where: { $0.retiredAt == nil }) ?? first
    }

    /// Keys a verifier trusts now: the active one and retired ones still published.
    public func published() async throws -> [SigningKey] {
        let now = clock.now()
        return try await current().filter { $0.isPublished(at: now) }
    }

    /// Looks `kid` up, reloading once if it is not known (another instance may have just rotated).
    public nonisolated func publishedKey(kid: String) async throws -> SigningKey? {
        let now = clock.now()
        let (loaded, loadedAt) = lastLoaded.withLock { $0 }
        if let loadedAt, now.timeIntervalSince(loadedAt) < Self.refreshInterval, let key = loaded.first(where: { $0.kid == kid }) {
            return key.isPublished(at: now) ? key : nil
        }
        return try await lookUp(kid: kid)
    }

    /// `kid`'s published key from the last load while it is fresh, without reading the database; nil
    /// when the last load is stale or does not hold it (`publishedKey(kid:)` then decides).
    public nonisolated func publishedKeyInMemory(kid: String) -> SigningKey? {
        let now = clock.now()
        let (loaded, loadedAt) = lastLoaded.withLock { $0 }
        guard let loadedAt, now.timeIntervalSince(loadedAt) < Self.refreshInterval,
            let key = loaded.first(where: { $0.kid == kid }), key.isPublished(at: now)
        else { return nil }
        return key
    }

    private func lookUp(kid: String) async throws -> SigningKey? {
        let now = clock.now()
        if let key = try await current().first(where: { $0.kid == kid }) { return key.isPublished(at: now) ? key : nil }
        guard let loadedAt, now.timeIntervalSince(loadedAt) >= 1 else { return nil }
        return try await reload().first(where: { $0.kid == kid && $0.isPublished(at: now) })
    }

    public func rotate(origin: ChangeOrigin) async throws -> SigningKey {
        let now = clock.now()
        _ = try await active()
        let next = SigningKey.generate(at: now)
        let audit = origin.entry(
            at: now,
            action: "signing-key.rotate",
            targetType: "signing-key",
            targetID: next.kid,
            appID: nil,
            before: nil,
            after: ["kid": .string(next.kid), "algorithm": .string("ES256")]
        )
        try await store.rotateSigningKey(to: stored(next), audit: audit)
        _ = try await reload()
        return next
    }

    /// Every key the store still holds as published, newest first (for the operators' listing).
    public func all() async throws -> [SigningKey] { try await reload() }

    private func current() async throws -> [SigningKey] {
        let (keys, loadedAt) = lastLoaded.withLock { $0 }
        if let loadedAt, clock.now().timeIntervalSince(loadedAt) < Self.refreshInterval, !keys.isEmpty { return keys }
        return try await reload()
    }

    private func reload() async throws -> [SigningKey] {
        let now = clock.now()
        let rows = try await store.signingKeys(publishedAfter: now.addingTimeInterval(-SigningKey.retiredKeyPublication))
        var loaded: [SigningKey] = []
        for row in rows {
            let scalar = try box.open(row.sealedKey, context: Self.context(row.kid))
            var key = SigningKey(privateKey: try P256.Signing.PrivateKey(rawRepresentation: scalar), createdAt: row.createdAt)
            key.retiredAt = row.retiredAt
            guard key.kid == row.kid else { throw StoreError.corruptRow("signing key \(row.kid) does not match its kid") }
            loaded.append(key)
        }
        lastLoaded.withLock { $0 = (loaded, now) }
        return loaded
    }

    private func stored(_ key: SigningKey) -> StoredSigningKey {
        StoredSigningKey(kid: key.kid, sealedKey: box.seal(key.sealable, context: Self.context(key.kid)), createdAt: key.createdAt, retiredAt: nil)
    }

    private static func context(_ kid: String) -> String { SealedValue.signingKeyContext(kid: kid) }
}
