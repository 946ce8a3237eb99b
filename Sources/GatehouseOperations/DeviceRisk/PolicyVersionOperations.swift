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

    static func notFound(_ appKey: AppKey, _ number: Int) -> DomainError {
        DomainError(.policyVersionNotFound, "\(appKey) has no policy version \(number).")
    }
}
