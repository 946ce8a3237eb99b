import Crypto
import Foundation
import GatehouseCore
import GatehouseStore

/// Attesters and the SDK configuration, for operators (the admin API and the CLI).
public struct AttesterOperations: Sendable {
    let access: AttesterAccess
    public var keys: SigningKeyRing { access.keys }

    public init(access: AttesterAccess) {
        self.access = access
    }

    /// A created or changed attester, and its HS256 secret when one was just generated (shown once).
    public struct AttesterResult: Sendable {
        public let attester: Attester
        public let sharedSecret: String?
    }

    public func createAttester(_ appKey: AppKey, attestID: AttestID, change: AttesterChange, origin: ChangeOrigin) async throws -> AttesterResult {
        let app = try await access.apps.app(appKey)
        try app.requireChangeable()
        let id = attestID
        let now = access.clock.now()
        let attester = try change.applied(to: Attester(appID: app.id, attestID: id, createdAt: now, updatedAt: now), at: now)
        let (sealed, secret) = access.sharedSecret(for: attester, previous: nil)
        let audit = origin.entry(
            at: now,
            action: "attester.create",
            targetType: "attester",
            targetID: "\(app.appKey)/\(id)",
            appID: app.id,
            before: nil,
            after: attester.snapshot
        )
        do {
            try await access.store.createAttester(StoredAttester(attester: attester, sealedSecret: sealed), audit: audit)
        } catch {
            if case .conflict = error { throw DomainError(.attesterExists, "App \(app.appKey) already has attester \(id).", field: "attestId") }
            throw error
        }
        return AttesterResult(attester: attester, sharedSecret: secret)
    }

    public func updateAttester(_ appKey: AppKey, attestID: AttestID, change: AttesterChange, origin: ChangeOrigin) async throws -> AttesterResult {
        let app = try await access.apps.app(appKey)
        try app.requireChangeable()
        let stored = try await access.storedAttester(app, attestID)
        let now = access.clock.now()
        let updated = try change.applied(to: stored.attester, at: now)
        let (sealed, secret) = access.sharedSecret(for: updated, previous: stored)
        let audit = origin.entry(
            at: now,
            action: "attester.update",
            targetType: "attester",
            targetID: "\(app.appKey)/\(updated.attestID)",
            appID: app.id,
            before: stored.attester.snapshot,
            after: updated.snapshot
        )
        try await access.store.updateAttester(from: stored.attester, to: StoredAttester(attester: updated, sealedSecret: sealed), audit: audit)
        return AttesterResult(attester: updated, sharedSecret: secret)
    }

    public func attesters(_ appKey: AppKey) async throws -> [Attester] {
        let app = try await access.apps.app(appKey)
        return try await access.store.attesters(appID: app.id).map(\.attester)
    }

    public func attester(_ appKey: AppKey, attestID: AttestID) async throws -> Attester {
        try await access.storedAttester(try await access.apps.app(appKey), attestID).attester
    }

    public func sdkConfig(_ appKey: AppKey) async throws -> StoredSDKConfig {
        try await access.store.sdkConfig(appID: try await access.apps.app(appKey).id)
    }

    public func setProtectedHosts(_ appKey: AppKey, hosts: [(host: String, pins: [String])], origin: ChangeOrigin) async throws -> StoredSDKConfig {
        let app = try await access.apps.app(appKey)
        var parsed: [ProtectedHost] = []
        for entry in hosts { parsed.append(try ProtectedHost(host: entry.host, pins: entry.pins)) }
        parsed = try SDKConfiguration.checkedHosts(parsed)
        let before = try await access.store.sdkConfig(appID: app.id)
        let now = access.clock.now()
        let audit = origin.entry(
            at: now,
            action: "sdk-config.hosts",
            targetType: "app",
            targetID: app.appKey.rawValue,
            appID: app.id,
            before: ["protectedHosts": .strings(before.protectedHosts.map(\.host))],
            after: ["protectedHosts": .strings(parsed.map(\.host))]
        )
        return try await access.store.setProtectedHosts(appID: app.id, hosts: parsed, at: now, audit: audit)
    }
}
