// DeviceRisk: device start, a ztoken per event, and the app backend's risk query that consumes it.
// Serves seed 002 (the device-risk SDK: appKey + secretKey, events 3300-3400, the H5 bridge).

import Foundation
import GatehouseCore
import GatehouseStore

/// Labels on decisions, from the app's backend (its server secret) and from operators (the admin API
/// and the console): each checked by Core, each audited, the last one standing on the decision.
public struct DecisionLabelOperations: Sendable {
    let store: any DeviceRiskStore
    let apps: AppOperations
    let clock: any GatehouseClock

    public init(store: any DeviceRiskStore, apps: AppOperations, clock: any GatehouseClock) {
        self.store = store
        self.apps = apps
        self.clock = clock
    }

    /// The wire form of a label, as the caller sent it.
    public struct Input: Sendable {
        public let label: String
        public let kind: String
        public let note: String?

        public init(label: String, kind: String, note: String?) {
            self.label = label
            self.kind = kind
            self.note = note
        }
    }

    /// An operator's label on a decision of the app named by its key.
    public func label(_ appKey: AppKey, decisionID: String, _ input: Input, origin: ChangeOrigin) async throws -> RiskDecisionRecord {
        try await label(try await apps.app(appKey), decisionID: decisionID, input, origin: origin)
    }

    /// A label on a decision of `app`; a decision of another app is not found.
    public func label(_ app: App, decisionID: String, _ input: Input, origin: ChangeOrigin) async throws -> RiskDecisionRecord {
        let now = clock.now()
        let label = try DecisionLabel.validated(verdict: input.label, kind: input.kind, note: input.note, by: origin.actor, at: now)
        let notFound = DomainError(.decisionNotFound, "No decision \(decisionID.prefix(64)) for \(app.appKey).")
        guard let id = UUID(uuidString: decisionID), let before = try await store.decision(appID: app.id, id: id) else { throw notFound }
        let audit = origin.entry(
            at: now,
            action: "risk.decision.label",
            targetType: "risk_decision",
            targetID: id.text,
            appID: app.id,
            before: before.label.map(Self.snapshot),
            after: Self.snapshot(label)
        )
        do {
            return try await store.labelDecision(appID: app.id, id: id, label: label, audit: audit)
        } catch {
            switch error {
            case .notFound: throw notFound
            case .conflict:
                throw DomainError(.labelLimit, "A decision takes at most \(DecisionLabel.maximumPerDecision) labels; the last one stands.")
            default: throw error
            }
        }
    }

    static func snapshot(_ label: DecisionLabel) -> AuditSnapshot {
        ["label": .string(label.verdict.rawValue), "kind": .string(label.kind.rawValue), "note": label.note.map { .string($0) } ?? .null]
    }
}
