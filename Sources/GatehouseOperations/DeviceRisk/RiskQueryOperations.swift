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
        try await record(checked(ztoken: ztoken, eventID: eventID, accountID: accountID, clientIP: clientIP, userAgent: userAgent, app: app))
    }

    /// A checked query's facts gathered, its decision made and written with its token's consumption.
    public func record(_ query: RiskQuery) async throws -> RecordedRiskDecision {
        let recorded = try await store.recordRiskDecision(query)
        store.countActivity(ActivityKey.of(recorded.record))
        return recorded
    }

    /// What this instance's memory settles about a query before any read.
    public enum InMemory: Sendable {
        /// Its token was refused before any read: decided, counted and written behind, as `query` does it.
        case refused(RecordedRiskDecision)
        /// Its token may be fresh: only `record` can tell, with the database.
        case fresh(RiskQuery)
    }

    /// `query` checked from this instance's memory: a token refused before any read (forged, expired,
    /// another app's, event's or account's) is decided and written behind as `query` does it, and a
    /// token that may be fresh comes back checked, for `record`. Nil when the query is invalid (`query`
    /// says why) or the app's policy is not in memory.
    public func inMemory(
        ztoken: String,
        eventID: Int,
        accountID: String,
        clientIP: String,
        userAgent: String?,
        app: App
    ) -> InMemory? {
        guard
            let query = try? checked(ztoken: ztoken, eventID: eventID, accountID: accountID, clientIP: clientIP, userAgent: userAgent, app: app),
            let policy = store.riskPolicyInMemory(appID: app.id)
        else { return nil }
        if query.tokenState == .fresh { return .fresh(query) }
        let recorded = store.recordRefusedDecision(query, policy: policy)
        store.countActivity(ActivityKey.of(recorded.record))
        return .refused(recorded)
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
