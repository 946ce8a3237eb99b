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
        try await checkAcceptance(attester, app: app)
        let credentials = try access.sealedCredentials(for: attester, change: change, previous: nil)
        let (sealed, secret) = access.sharedSecret(for: attester, previous: nil)
        let audit = origin.entry(
            at: now,
            action: "attester.create",
            targetType: "attester",
            targetID: "\(app.appKey)/\(id)",
            appID: app.id,
            before: nil,
            after: attester.snapshot.merging(Self.credentialsNamed(change)) { $1 }
        )
        do {
            try await access.store.createAttester(
                StoredAttester(attester: attester, sealedSecret: sealed, sealedCredentials: credentials),
                audit: audit
            )
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
        try await checkAcceptance(updated, app: app)
        let credentials = try access.sealedCredentials(for: updated, change: change, previous: stored)
        let (sealed, secret) = access.sharedSecret(for: updated, previous: stored)
        let audit = origin.entry(
            at: now,
            action: "attester.update",
            targetType: "attester",
            targetID: "\(app.appKey)/\(updated.attestID)",
            appID: app.id,
            before: stored.attester.snapshot,
            after: updated.snapshot.merging(Self.credentialsNamed(change)) { $1 }
        )
        try await access.store.updateAttester(
            from: stored.attester,
            to: StoredAttester(attester: updated, sealedSecret: sealed, sealedCredentials: credentials),
            audit: audit
        )
        return AttesterResult(attester: updated, sharedSecret: secret)
    }

    /// An attester that takes Play Integrity verdicts names one of the app's `playIntegrity` attesters.
    private func checkAcceptance(_ attester: Attester, app: App) async throws {
        guard let acceptance = attester.acceptPlayIntegrity else { return }
        guard let named = try await access.store.attester(appID: app.id, attestID: acceptance.attestID), named.attester.kind == .playIntegrity
        else {
            throw DomainError(
                .invalidAttester,
                "acceptPlayIntegrity.attestId names no playIntegrity attester of app \(app.appKey).",
                field: "acceptPlayIntegrity.attestId"
            )
        }
    }

    /// Which Play Integrity secrets a change replaced, for the audit log: their names, never their values.
    static func credentialsNamed(_ change: AttesterChange) -> AuditSnapshot {
        guard let sent = change.playIntegrityCredentials else { return [:] }
        let names = [("decryptionKey", sent.decryptionKey), ("verificationKey", sent.verificationKey), ("serviceAccount", sent.serviceAccount)]
            .filter { $0.1 != nil }.map(\.0)
        return names.isEmpty ? [:] : ["playIntegritySecretsReplaced": .strings(names)]
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
