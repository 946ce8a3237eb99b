import Foundation
import GatehouseCore

/// A batch's consumptions and decisions on PostgreSQL in two statements and no transaction: one read,
/// the batch judged in Core, then one write. The write's consumptions, velocity pairs and decisions
/// are one statement, so they commit together or not at all, as in a transaction, without its `BEGIN`
/// and `COMMIT`: two of the four round trips a batch made, whose waits were most of a query's
/// latency at half the peak rate (docs/PERFORMANCE.md).
///
/// Each token's first query in the batch is judged as consuming it. The write consumes with
/// `ON CONFLICT DO NOTHING` and stores a consuming query's decision and pairs only if its consumption
/// was written. So of any number of queries with one token, on any number of instances, exactly one
/// is `fresh` (its consumption and decision written together); a query whose token was consumed
/// before (a replay), or by another batch between this batch's read and its write, is judged
/// `replayed` after all. The decisions of those found only at the write consumed nothing, so they are
/// written behind their answers, as every refused token's is: one more statement in the batch would
/// have cost it a round trip, and, failing, answered 503 to queries whose consumptions and decisions
/// the write had already committed (a retried token is a replay).
extension SQLDeviceRiskStore {
    /// The write's name on each PostgreSQL connection: its text is the same for any batch.
    enum ConsumingWrite: PreparedSQL {
        static let name = "gatehouse_consuming_write_v1"
    }

    static func consumeAndDecideInOneWrite(
        _ pending: [PendingConsumption],
        in connection: any SQLDatabase,
        writingBehind behind: WriteBehind<RefusedDecisionRow>
    ) async throws -> [RecordedRiskDecision] {
        let reads = try await readWithPages(pending, in: connection)
        var claimed = Set<ConsumedID>()
        var recorded: [RecordedRiskDecision] = []
        recorded.reserveCapacity(pending.count)
        var consuming: [Int] = []
        var consumes: [String?] = []
        var pairs: [ConsumingPair] = []
        for (index, (item, (read, page))) in zip(pending, reads).enumerated() {
            let consumed = claimed.insert(ConsumedID(app: item.query.appID, token: item.tokenID)).inserted
            let consumption: RiskFacts.Consumption = consumed ? .consumed(pageURL: item.claims.fromPage ? page : nil) : .alreadyConsumed
            let (decision, stale) = judge(item, read: read, consumption: consumption)
            recorded.append(decision)
            consumes.append(consumed ? item.tokenID : nil)
            guard consumed else { continue }
            consuming.append(index)
            pairs += stale.map { ConsumingPair(pair: $0, seen: item.query.at, tokenID: item.tokenID) }
        }
        let written = try await writeConsuming(
            consuming.map { pending[$0] },
            pairs: pairs,
            decisions: recorded.map(\.record),
            consumes: consumes,
            in: connection
        )
        for index in consuming where !written.contains(ConsumedID(app: pending[index].query.appID, token: pending[index].tokenID)) {
            recorded[index] = judge(pending[index], read: reads[index].0, consumption: .alreadyConsumed).0
            behind.enqueue(.decision(recorded[index].record))
        }
        return recorded
    }

    /// A velocity pair that a consumption writes if its token's consumption is written.
    struct ConsumingPair {
        let pair: VelocityEdge
        let seen: Date
        let tokenID: String
    }

    /// The batch's one write. Consumptions and pairs are written in the order every batch writes them
    /// (`consumptionOrder`, `VelocityEdge`'s), so that two batches cannot deadlock; a pair that several
    /// consumptions share is written once, with the newest time (PostgreSQL refuses to update one row
    /// twice in a statement).
    /// - Returns: the consumptions written; those missing were consumed before, and neither their
    ///   decisions nor their pairs were written.
    /// - Parameters:
    ///   - consuming: the queries whose tokens the batch consumes.
    ///   - consumes: for each decision, the token it consumes, if any: it is written only if that
    ///     token's consumption is.
    static func writeConsuming(
        _ consuming: [PendingConsumption],
        pairs: [ConsumingPair],
        decisions: [RiskDecisionRecord],
        consumes: [String?],
        in connection: any SQLDatabase
    ) async throws(StoreError) -> Set<ConsumedID> {
        let ordered = consumptionOrder(consuming).map { consuming[$0] }
        let pairs = pairs.sorted(by: { $0.pair < $1.pair })
        let statement: SQL = """
            WITH consumed AS (
              INSERT INTO consumed_ztokens (app_id, token_id, device_id, consumed_at, expires_at)
              SELECT app_id, token_id, device_id, consumed_at, expires_at
              FROM unnest(\(.uuids(ordered.map(\.query.appID.rawValue)))::uuid[], \(.texts(ordered.map(\.tokenID)))::text[],
                \(.texts(ordered.map(\.claims.deviceID.rawValue)))::text[], \(.dates(ordered.map(\.query.at)))::timestamptz[],
                \(.dates(ordered.map(\.claims.consumptionKeptUntil)))::timestamptz[])
                WITH ORDINALITY AS c (app_id, token_id, device_id, consumed_at, expires_at, n)
              ORDER BY n
              ON CONFLICT DO NOTHING RETURNING app_id, token_id),
            pairs AS (
              INSERT INTO velocity_edges (app_id, kind, subject, member, last_seen)
              SELECT p.app_id, p.kind, p.subject, p.member, max(p.last_seen)
              FROM unnest(\(.uuids(pairs.map(\.pair.appID.rawValue)))::uuid[], \(.ints(pairs.map { Int64($0.pair.kind.rawValue) }))::int8[],
                \(.texts(pairs.map(\.pair.subject)))::text[], \(.texts(pairs.map(\.pair.member)))::text[], \(.dates(pairs.map(\.seen)))::timestamptz[],
                \(.texts(pairs.map(\.tokenID)))::text[]) WITH ORDINALITY AS p (app_id, kind, subject, member, last_seen, token_id, n)
              JOIN consumed ON consumed.app_id = p.app_id AND consumed.token_id = p.token_id
              GROUP BY p.kind, p.subject, p.member, p.app_id
              ORDER BY min(p.n)
              ON CONFLICT (app_id, kind, subject, member) DO UPDATE SET last_seen = excluded.last_seen
              WHERE velocity_edges.last_seen < excluded.last_seen),
            decided AS (
              INSERT INTO \(decisionColumns)
              SELECT \(columns: decisionColumnNames)
              FROM unnest(\(postgresDecisionArrays(decisions, outcomes: try ruleOutcomes(decisions))), \(.optionalTexts(consumes))::text[])
                AS d (\(columns: decisionColumnNames + ["consumes"]))
              WHERE d.consumes IS NULL OR EXISTS (SELECT 1 FROM consumed WHERE consumed.app_id = d.app_id AND consumed.token_id = d.consumes))
            SELECT app_id, token_id FROM consumed
            """
        var written = Set<ConsumedID>()
        for row in try await connection.query(ConsumingWrite.self, statement) {
            written.insert(ConsumedID(app: AppID(try row.uuid("app_id")), token: try row.text("token_id")))
        }
        return written
    }
}
