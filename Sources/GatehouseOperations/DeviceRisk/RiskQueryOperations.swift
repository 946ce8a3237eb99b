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

    /// Checks the query and its token without I/O, then the store gathers the facts, Core decides
    /// from them, and the store writes the token's consumption and the decision together (one
    /// statement on PostgreSQL, one transaction on SQLite). A forged token never reaches the ztoken
    /// table.
    public func query(
        ztoken: String,
        eventID: Int,
        accountID: String,
        clientIP: String,
        userAgent: String?,
        app: App
    ) async throws -> RecordedRiskDecision {
        let query = try checked(ztoken: ztoken, eventID: eventID, accountID: accountID, clientIP: clientIP, userAgent: userAgent, app: app)
        let recorded = try await store.recordRiskDecision(query)
        store.countActivity(ActivityKey.of(recorded.record))
        return recorded
    }

    /// `query` answered from this instance's memory when its token is refused before any read (forged,
    /// expired, another app's, event's or account's), decided and written behind as `query` does it; nil
    /// when the query is invalid (`query` says why), its token may be fresh (only the database can
    /// consume it), or the app's policy is not in memory.
    public func refusedInMemory(
        ztoken: String,
        eventID: Int,
        accountID: String,
        clientIP: String,
        userAgent: String?,
        app: App
    ) -> RecordedRiskDecision? {
        guard
            let query = try? checked(ztoken: ztoken, eventID: eventID, accountID: accountID, clientIP: clientIP, userAgent: userAgent, app: app),
            query.tokenState != .fresh, let policy = store.riskPolicyInMemory(appID: app.id)
        else { return nil }
        let recorded = store.recordRefusedDecision(query, policy: policy)
        store.countActivity(ActivityKey.of(recorded.record))
        return recorded
    }

    /// The query's values and its token checked, with no I/O.
    private func checked(ztoken: String, eventID: Int, accountID: String, clientIP: String, userAgent: String?, app: App) throws -> RiskQuery {
        try RiskQuery(
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
    }

    public func decision(app: App, id: String) async throws -> RiskDecisionRecord {
        guard let uuid = UUID(uuidString: id), let record = try await store.decision(appID: app.id, id: uuid) else {
            throw DomainError(.decisionNotFound, "No decision \(id) for this app.")
        }
        return record
    }
}
