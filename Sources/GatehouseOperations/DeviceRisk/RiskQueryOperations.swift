import Foundation
import GatehouseCore
import GatehouseStore

/// Risk queries from the app's backend, and the decisions they stored.
public struct RiskQueryOperations: Sendable {
    let store: any DeviceRiskStore
    let keys: ServerKeys
    let clock: any GatehouseClock

    public init(store: any DeviceRiskStore, keys: ServerKeys, clock: any GatehouseClock) {
        self.store = store
        self.keys = keys
        self.clock = clock
    }

    /// Checks the query and its token without I/O, then the store consumes the token and gathers
    /// the facts in one transaction, and Core decides from them. A forged token never reaches the
    /// ztoken table.
    public func query(
        ztoken: String,
        eventID: Int,
        accountID: String,
        clientIP: String,
        userAgent: String?,
        app: App
    ) async throws -> RecordedRiskDecision {
        let query = try RiskQuery(
            ztoken: ztoken,
            eventID: eventID,
            accountID: accountID,
            clientIP: clientIP,
            userAgent: userAgent,
            app: app.id,
            ztokenTTL: app.settings.ztokenTTLSeconds,
            keys: keys,
            at: clock.now()
        )
        let recorded = try await store.recordRiskDecision(query)
        store.countActivity(ActivityKey.of(recorded.record))
        return recorded
    }

    public func decision(app: App, id: String) async throws -> RiskDecisionRecord {
        guard let uuid = UUID(uuidString: id), let record = try await store.decision(appID: app.id, id: uuid) else {
            throw DomainError(.decisionNotFound, "No decision \(id) for this app.")
        }
        return record
    }
}
