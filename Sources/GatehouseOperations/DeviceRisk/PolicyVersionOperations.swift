import Foundation
import GatehouseCore
import GatehouseStore

/// The app's published policy versions, for the admin API, the console and the command line: read
/// any, restore one (which publishes it again as the newest, audited).
public struct PolicyVersionOperations: Sendable {
    let store: any DeviceRiskStore
    let apps: AppOperations
    let clock: any GatehouseClock

    public init(store: any DeviceRiskStore, apps: AppOperations, clock: any GatehouseClock) {
        self.store = store
        self.apps = apps
        self.clock = clock
    }

    /// Newest first; `before` pages on (the last version number of the previous page).
    public func versions(_ appKey: AppKey, before: Int?, limit: Int?) async throws -> [PolicyVersion] {
        let size = try PageSize(validating: limit)
        return try await store.policyVersions(appID: try await apps.app(appKey).id, before: before, limit: size.value)
    }

    public func version(_ appKey: AppKey, number: Int) async throws -> PolicyVersion {
        let app = try await apps.app(appKey)
        guard let version = try await store.policyVersion(appID: app.id, number: number) else { throw Self.notFound(appKey, number) }
        return version
    }

    /// Makes version `number` the app's policy again, as a new version; returns it.
    public func restore(_ appKey: AppKey, number: Int, origin: ChangeOrigin) async throws -> PolicyVersion {
        let app = try await apps.app(appKey)
        let now = clock.now()
        let current = try await store.policyVersions(appID: app.id, before: nil, limit: 1).first
        let audit = origin.entry(
            at: now,
            action: "risk.policy.restore",
            targetType: "policy_version",
            targetID: String(number),
            appID: app.id,
            before: current.map { ["version": .int($0.number)] },
            after: ["restored": .int(number)]
        )
        do {
            return try await store.restorePolicyVersion(appID: app.id, number: number, at: now, audit: audit)
        } catch {
            if case .notFound = error { throw Self.notFound(appKey, number) }
            throw error
        }
    }

    /// A proposed policy (for a replay or a shadow): version `version` (the newest when nil) with its
    /// thresholds and weights or its policy rules replaced, each checked as a change would be; and its
    /// version when it is one unchanged.
    func proposal(
        _ app: App,
        version: Int?,
        rules: [Int: RiskRules]?,
        policyRules: [PolicyRule]?
    ) async throws -> (document: PolicyDocument, version: Int?) {
        var base: PolicyVersion?
        if let number = version {
            guard let found = try await store.policyVersion(appID: app.id, number: number) else {
                // Named in a body, not in the path: the request is what is wrong (400), no resource is missing.
                throw DomainError(.policyVersionNotFound, "\(app.appKey) has no policy version \(number).", field: "version", kind: .invalid)
            }
            base = found
        } else {
            base = try await store.policyVersions(appID: app.id, before: nil, limit: 1).first
        }
        var document: PolicyDocument
        if let base {
            document = base.document
        } else {
            // Before the app's first change: the tables, as the risk queries read them (version 0).
            document = PolicyDocument(
                rules: try await store.riskRules(appID: app.id),
                lists: try await store.listEntries(appID: app.id),
                policyRules: try await store.policyRules(appID: app.id)
            )
        }
        if let rules {
            for (scope, value) in rules {
                guard scope == 0 || (try? EventID(validating: scope)) != nil else {
                    throw DomainError(.invalidReplay, "A scope is app or an event id from 3300 to 3400.", field: "rules")
                }
                _ = try value.validated()
            }
            document.rules = rules
        }
        if let policyRules {
            guard policyRules.count <= PolicyRule.maximumPerApp, Set(policyRules.map(\.name)).count == policyRules.count else {
                throw DomainError(.invalidReplay, "At most \(PolicyRule.maximumPerApp) policy rules, each name once.", field: "policyRules")
            }
            for rule in policyRules { _ = try rule.compiled() }
            document.policyRules = policyRules
        }
        let unchanged = rules == nil && policyRules == nil
        return (document, unchanged ? base?.number : nil)
    }

    static func notFound(_ appKey: AppKey, _ number: Int) -> DomainError {
        DomainError(.policyVersionNotFound, "\(appKey) has no policy version \(number).")
    }
}
