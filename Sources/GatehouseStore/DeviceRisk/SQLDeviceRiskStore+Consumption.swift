import Foundation
import GatehouseCore

/// A token's consumption row, as `RETURNING` names it.
struct ConsumedID: Hashable {
    let app: AppID
    let token: String
}

/// A risk query whose fresh token is to be consumed, with the policy that judges it.
struct PendingConsumption: Sendable {
    let query: RiskQuery
    let tokenID: String
    let claims: ZTokenClaims
    let policy: RiskPolicy
    let rules: EffectiveRiskRules
}

/// Risk queries with fresh tokens, in group commits: the queries that arrive while a batch is in
/// flight are read, consumed, judged and stored together, and every caller returns once the batch's
/// consumptions and decisions have committed. On PostgreSQL (a batch judged by one set of thresholds,
/// almost every batch) that is two statements and no transaction: one read, then one write holding
/// every consumption, velocity pair and decision (`SQLDeviceRiskStore+ConsumingWrite`). Otherwise one
/// transaction: the devices and velocity counts in one read per set of thresholds, the consumptions in
/// one `INSERT ... ON CONFLICT DO NOTHING`, the velocity pairs in one upsert, the decisions in one
/// insert. A token shown twice in one batch, or already consumed, is judged `replayed`.
extension SQLDeviceRiskStore {
    /// - Parameter behind: where the decisions of replays found only at the write go (PostgreSQL's two
    ///   statements), as refused tokens' decisions do.
    static func consumeAndDecide(
        _ pending: [PendingConsumption],
        in database: any SQLDatabase,
        writingBehind behind: WriteBehind<RefusedDecisionRow>
    ) async throws -> [RecordedRiskDecision] {
        if database.dialect == .postgres, readGroups(pending).count == 1 {
            return try await database.onOneConnection { connection in
                try await consumeAndDecideInOneWrite(pending, in: connection, writingBehind: behind)
            }
        }
        return try await database.transaction { transaction in
            // Each count leaves the batch's own tokens out: read before they are written.
            let reads = try await readForConsumption(pending, in: transaction)
            let consumed = try await insertConsumptions(pending, in: transaction)
            let consumptions = try await consumptions(of: pending, consumed: consumed, in: transaction)
            var recorded: [RecordedRiskDecision] = []
            recorded.reserveCapacity(pending.count)
            var staleEdges: [VelocityEdge: Date] = [:]
            for ((item, read), consumption) in zip(zip(pending, reads), consumptions) {
                let (decision, pairs) = judge(item, read: read, consumption: consumption)
                recorded.append(decision)
                // PostgreSQL refuses to update one row twice in a statement: pairs are merged first.
                for pair in pairs { staleEdges[pair] = max(staleEdges[pair] ?? .distantPast, item.query.at) }
            }
            if !staleEdges.isEmpty { try await upsertVelocityEdges(staleEdges, in: transaction) }
            try await insertDecisions(recorded.map(\.record), in: transaction)
            return recorded
        }
    }

    /// A query's decision on what its batch read, and the velocity pairs its consumption is to write:
    /// none if it consumed nothing; of its three, those not written recently (`freshPairs`).
    static func judge(_ item: PendingConsumption, read: ConsumptionRead, consumption: RiskFacts.Consumption) -> (RecordedRiskDecision, [VelocityEdge])
    {
        let facts = RiskFacts(consumption: consumption, device: read.device, velocity: read.velocity, policy: item.policy, rules: item.rules)
        let decision = RecordedRiskDecision(record: RiskEngine.decide(item.query, facts: facts, id: UUID.random()), facts: facts)
        guard case .consumed = consumption else { return (decision, []) }
        return (decision, VelocityEdge.pairs(of: item).filter { !read.freshPairs.contains($0) })
    }

    /// Records each token's id, in one statement for the batch; returns the ids written.
    static func insertConsumptions(_ pending: [PendingConsumption], in transaction: any SQLDatabase) async throws(StoreError) -> Set<ConsumedID> {
        let rows = consumptionOrder(pending).map { pending[$0] }.map { item -> SQL in
            """
            (\(item.query.appID.rawValue), \(item.tokenID), \(item.claims.deviceID.rawValue), \(item.query.at), \(item.claims.consumptionKeptUntil))
            """
        }
        let inserted = try await transaction.query(
            """
            INSERT INTO consumed_ztokens (app_id, token_id, device_id, consumed_at, expires_at) VALUES \(SQL.joined(rows, separator: ", "))
            ON CONFLICT DO NOTHING RETURNING app_id, token_id
            """
        )
        var consumed = Set<ConsumedID>()
        for row in inserted { consumed.insert(ConsumedID(app: AppID(try row.uuid("app_id")), token: try row.text("token_id"))) }
        return consumed
    }

    /// The order consumptions are written in, the same in every batch and either statement: two batches
    /// locking the same ids (or pairs, below) in opposite orders would deadlock on PostgreSQL. Token ids
    /// first: the app's UUID is formatted only to break a tie, which almost never happens.
    /// - Returns: the indices of `pending` in that order.
    static func consumptionOrder(_ pending: [PendingConsumption]) -> [Int] {
        pending.indices.sorted(by: { (pending[$0].tokenID, pending[$0].query.appID) < (pending[$1].tokenID, pending[$1].query.appID) })
    }

    /// Each query's consumption, given the ids its batch wrote: the first query of each id won (a token
    /// shown twice in one batch is replayed the second time). Bridge tokens that won find their page.
    static func consumptions(
        of pending: [PendingConsumption],
        consumed: Set<ConsumedID>,
        in transaction: any SQLDatabase
    ) async throws(StoreError) -> [RiskFacts.Consumption] {
        var unclaimed = consumed
        let won = pending.map { unclaimed.remove(ConsumedID(app: $0.query.appID, token: $0.tokenID)) != nil }
        let pages = try await pages(of: zip(pending, won).filter { $0.1 && $0.0.claims.fromPage }.map(\.0), in: transaction)
        return zip(pending, won).map { item, won in
            guard won else { return .alreadyConsumed }
            return .consumed(pageURL: item.claims.fromPage ? pages[ConsumedID(app: item.query.appID, token: item.tokenID)] : nil)
        }
    }

    /// The pages of a batch's bridge tokens, in one statement: a batch of web checkouts had read them
    /// one statement each, inside its transaction.
    static func pages(of bridged: [PendingConsumption], in database: any SQLDatabase) async throws(StoreError) -> [ConsumedID: String] {
        guard !bridged.isEmpty else { return [:] }
        var pages: [ConsumedID: String] = [:]
        for row in try await database.query(pagesStatement(bridged)) {
            pages[ConsumedID(app: AppID(try row.uuid("app_id")), token: try row.text("token_id"))] = try row.text("page_url")
        }
        return pages
    }

    /// The ids asked for as a joined table, each looked up by the pages' key. A join is planned as
    /// lookups by every SQLite; `(app_id, token_id) IN (VALUES ...)` is too by the SQLite Gatehouse
    /// embeds (3.54), but 3.40's planner scanned every page of every app for it.
    static func pagesStatement(_ bridged: [PendingConsumption]) -> SQL {
        let keys = bridged.map { item -> SQL in "(\(.uuid(item.query.appID.rawValue)), \(.text(item.tokenID)))" }
        return """
            WITH asked (app_id, token_id) AS (VALUES \(SQL.joined(keys, separator: ", ")))
            SELECT p.app_id, p.token_id, p.page_url FROM asked JOIN ztoken_pages AS p ON p.app_id = asked.app_id AND p.token_id = asked.token_id
            """
    }

    /// The consumed tokens' pairs that were not fresh, each with its newest time (what the velocity
    /// counts read, migration 0012).
    static func upsertVelocityEdges(_ edges: [VelocityEdge: Date], in database: any SQLDatabase) async throws(StoreError) {
        let rows = edges.sorted(by: { $0.key < $1.key }).map { edge, seen -> SQL in
            "(\(edge.appID.rawValue), \(edge.kind.rawValue), \(edge.subject), \(edge.member), \(seen))"
        }
        try await database.query(
            """
            INSERT INTO velocity_edges (app_id, kind, subject, member, last_seen) VALUES \(SQL.joined(rows, separator: ", "))
            ON CONFLICT (app_id, kind, subject, member) DO UPDATE SET last_seen = excluded.last_seen
            WHERE velocity_edges.last_seen < excluded.last_seen
            """
        )
    }
}
