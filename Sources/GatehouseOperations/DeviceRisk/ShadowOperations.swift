import Foundation
import GatehouseCore
import GatehouseStore

/// A whole policy in shadow beside the live one: every risk query judged by both, the live answer
/// returned and the shadow's outcome stored with the decision; each start and stop audited.
public struct ShadowOperations: Sendable {
    let store: any DeviceRiskStore
    let apps: AppOperations
    let clock: any GatehouseClock

    public init(store: any DeviceRiskStore, apps: AppOperations, clock: any GatehouseClock) {
        self.store = store
        self.apps = apps
        self.clock = clock
    }

    /// Runs version `version` (the newest when nil), with its thresholds and weights or its policy
    /// rules replaced, in shadow; replaces a shadow already running.
    public func start(
        _ appKey: AppKey,
        version: Int?,
        rules: [Int: RiskRules]?,
        policyRules: [PolicyRule]?,
        origin: ChangeOrigin
    ) async throws -> PolicyShadow {
        let app = try await apps.app(appKey)
        let versions = PolicyVersionOperations(store: store, apps: apps, clock: clock)
        let proposal = try await versions.proposal(app, version: version, rules: rules, policyRules: policyRules)
        let now = clock.now()
        let shadow = PolicyShadow(document: proposal.document, version: proposal.version, startedAt: now, startedBy: origin.actor.description)
        let before = try await store.shadow(appID: app.id)
        let audit = origin.entry(
            at: now,
            action: "risk.shadow.start",
            targetType: "shadow_policy",
            targetID: appKey.rawValue,
            appID: app.id,
            before: before.map(Self.snapshot),
            after: Self.snapshot(shadow)
        )
        try await store.setShadow(shadow, appID: app.id, audit: audit)
        return shadow
    }

    /// Nil when the app runs none.
    public func shadow(_ appKey: AppKey) async throws -> PolicyShadow? {
        try await store.shadow(appID: try await apps.app(appKey).id)
    }

    /// Stops the shadow; without one there is nothing to stop, and nothing is audited (a repeated
    /// stop, or one after another operator's, is not an error).
    public func stop(_ appKey: AppKey, origin: ChangeOrigin) async throws {
        let app = try await apps.app(appKey)
        guard let running = try await store.shadow(appID: app.id) else { return }
        let audit = origin.entry(
            at: clock.now(),
            action: "risk.shadow.stop",
            targetType: "shadow_policy",
            targetID: appKey.rawValue,
            appID: app.id,
            before: Self.snapshot(running),
            after: nil
        )
        do {
            try await store.removeShadow(appID: app.id, audit: audit)
        } catch {
            if case .notFound = error { return }
            throw error
        }
    }

    static func snapshot(_ shadow: PolicyShadow) -> AuditSnapshot {
        [
            "version": shadow.version.map { .int($0) } ?? .string("proposed"),
            "policyRules": .strings(shadow.document.policyRules.map { "\($0.name): \($0.effectText) when \($0.when)" }),
        ]
    }
}
