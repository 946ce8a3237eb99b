// DeviceRisk: device start, a ztoken per event, and the app backend's risk query that consumes it.
// Serves seed 002 (the device-risk SDK: appKey + secretKey, events 3300-3400, the H5 bridge).

import Foundation
import GatehouseCore
import GatehouseStore

/// The fraud team's rules, for the admin API and the console: each checked by Core as it will run
/// before it is stored, each change audited. The risk queries of every instance apply a change once
/// its copy of the policy is renewed (`SQLStore.cacheLifetime`).
public struct PolicyRuleOperations: Sendable {
    let store: any DeviceRiskStore
    let apps: AppOperations
    let clock: any GatehouseClock

    public init(store: any DeviceRiskStore, apps: AppOperations, clock: any GatehouseClock) {
        self.store = store
        self.apps = apps
        self.clock = clock
    }

    public func rules(_ appKey: AppKey) async throws -> [PolicyRule] {
        try await store.policyRules(appID: try await apps.app(appKey).id)
    }

    /// Creates the rule, or replaces the one of its name. `eventID` names the one event the rule
    /// judges (registered for the app); nil for all.
    public func put(
        _ appKey: AppKey,
        name: String,
        when: String,
        then: PolicyRule.Effect,
        mode: PolicyRule.Mode,
        eventID: Int?,
        origin: ChangeOrigin
    ) async throws -> PolicyRule {
        let app = try await apps.app(appKey)
        var event: EventID?
        if let eventID {
            event = try EventID(validating: eventID)
            guard try await apps.store.events(of: app.id).contains(where: { $0.eventID.rawValue == eventID }) else {
                throw DomainError(.eventNotRegistered, "Event \(eventID) is not registered for \(appKey).", field: "eventId")
            }
        }
        let rule = try PolicyRule.validated(name: name, when: when, then: then, mode: mode, eventID: event).rule
        let before = try await store.policyRules(appID: app.id).first { $0.name == name }
        let now = clock.now()
        let audit = origin.entry(
            at: now,
            action: before == nil ? "risk.rule.create" : "risk.rule.update",
            targetType: "policy_rule",
            targetID: name,
            appID: app.id,
            before: before.map(Self.snapshot),
            after: Self.snapshot(rule)
        )
        do {
            try await store.putPolicyRule(rule, appID: app.id, at: now, audit: audit)
        } catch {
            if case .conflict = error {
                throw DomainError(.invalidPolicyRule, "An app has at most \(PolicyRule.maximumPerApp) rules.", kind: .conflict)
            }
            throw error
        }
        return rule
    }

    public func remove(_ appKey: AppKey, name: String, origin: ChangeOrigin) async throws {
        let app = try await apps.app(appKey)
        let notFound = DomainError(.policyRuleNotFound, "\(appKey) has no rule named \(name.prefix(64)).")
        guard let rule = try await store.policyRules(appID: app.id).first(where: { $0.name == name }) else { throw notFound }
        let audit = origin.entry(
            at: clock.now(),
            action: "risk.rule.remove",
            targetType: "policy_rule",
            targetID: name,
            appID: app.id,
            before: Self.snapshot(rule),
            after: nil
        )
        do {
            try await store.removePolicyRule(appID: app.id, name: name, audit: audit)
        } catch {
            if case .notFound = error { throw notFound }
            throw error
        }
    }

    static func snapshot(_ rule: PolicyRule) -> AuditSnapshot {
        [
            "when": .string(rule.when), "then": .string(rule.effectText), "mode": .string(rule.mode.rawValue),
            "eventId": rule.eventID.map { .int($0.rawValue) } ?? .null,
        ]
    }
}
