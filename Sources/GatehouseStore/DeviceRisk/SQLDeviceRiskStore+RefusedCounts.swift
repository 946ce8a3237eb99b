import Foundation
import GatehouseCore

/// What the refused tokens' queue writes behind their answers: a decision whole (one of the first
/// few of its key, `RefusedDecisionSampler`), or decisions counted into their key's row. Counts of
/// one key that wait in the queue together become one, so a flood holds one queued row per key.
enum RefusedDecisionRow: BehindRow {
    case decision(RiskDecisionRecord)
    case count(RefusedDecisionCount)

    var mergeKey: RefusedDecisionCount.Key? {
        if case .count(let count) = self { return count.key }
        return nil
    }

    var weight: Int {
        switch self {
        case .decision: 1
        case .count(let count): count.decisions
        }
    }

    mutating func merge(_ other: RefusedDecisionRow) {
        guard case .count(var mine) = self, case .count(let theirs) = other else { return }
        mine.add(theirs)
        self = .count(mine)
    }
}

/// Filters for the refused counts' listing; nil means any.
public struct RefusedCountFilter: Sendable {
    public var appID: AppID?
    public var clientAddress: String?
    public var from: Date?
    public var to: Date?

    public init(appID: AppID? = nil, clientAddress: String? = nil, from: Date? = nil, to: Date? = nil) {
        self.appID = appID
        self.clientAddress = clientAddress
        self.from = from
        self.to = to
    }
}

/// Where a page of refused counts ends: newest minute first, then app, state and address.
public struct RefusedCountCursor: Sendable, Equatable {
    public let minute: Date
    public let appID: AppID
    public let tokenState: ZTokenState
    public let clientAddress: String

    public init(minute: Date, appID: AppID, tokenState: ZTokenState, clientAddress: String) {
        self.minute = minute
        self.appID = appID
        self.tokenState = tokenState
        self.clientAddress = clientAddress
    }
}

/// A count row in the operators' listing, with the appKey they know the app by.
public struct ListedRefusedCount: Sendable, Equatable {
    public let count: RefusedDecisionCount
    public let appKey: AppKey
}

extension SQLDeviceRiskStore {
    /// Stores the decision of a refused token behind its answer, whole or counted (the sampler says).
    func recordRefused(_ record: RiskDecisionRecord) {
        switch refusedSampler.withLock({ $0.admit(record) }) {
        case .store(let record): refusedDecisions.enqueue(.decision(record))
        case .count(let count): refusedDecisions.enqueue(.count(count))
        }
    }

    static func writeRefused(_ rows: [RefusedDecisionRow], in database: any SQLDatabase) async throws(StoreError) {
        var decisions: [RiskDecisionRecord] = []
        var counts: [RefusedDecisionCount] = []
        for row in rows {
            switch row {
            case .decision(let record): decisions.append(record)
            case .count(let count): counts.append(count)
            }
        }
        if !decisions.isEmpty { try await insertDecisions(decisions, in: database) }
        if !counts.isEmpty { try await addRefusedCounts(counts, in: database) }
    }

    /// One statement for the batch; each key is in it once (the queue merged them).
    static func addRefusedCounts(_ counts: [RefusedDecisionCount], in database: any SQLDatabase) async throws(StoreError) {
        let rows: [SQL] = counts.map { count in
            """
            (\(count.appID.rawValue), \(count.minute), \(count.clientAddress), \(count.tokenState.rawValue), \(Int64(count.decisions)),
             \(count.firstAt), \(count.lastAt))
            """
        }
        try await database.query(
            """
            INSERT INTO refused_decision_counts (app_id, minute, client_address, token_state, decisions, first_at, last_at)
            VALUES \(SQL.joined(rows, separator: ", "))
            ON CONFLICT (app_id, minute, client_address, token_state) DO UPDATE SET
              decisions = refused_decision_counts.decisions + excluded.decisions,
              first_at = CASE WHEN excluded.first_at < refused_decision_counts.first_at THEN excluded.first_at
                ELSE refused_decision_counts.first_at END,
              last_at = CASE WHEN excluded.last_at > refused_decision_counts.last_at THEN excluded.last_at
                ELSE refused_decision_counts.last_at END
            """
        )
    }

    /// Newest minute first, strictly after `cursor` in that order, each with its app's appKey.
    public func refusedCounts(
        matching filter: RefusedCountFilter,
        after cursor: RefusedCountCursor?,
        limit: Int
    ) async throws(StoreError) -> [ListedRefusedCount] {
        // One static statement, its optional filters as `ListingFilter` says.
        let (anyUUID, farPast, farFuture) = (ListingFilter.anyUUID, ListingFilter.farPast, ListingFilter.farFuture)
        let flag = ListingFilter.flag
        await refusedDecisions.caughtUp()
        let rows = try await database.query(
            """
            SELECT refused_decision_counts.*, apps.app_key FROM refused_decision_counts
              JOIN apps ON apps.app_id = refused_decision_counts.app_id
            WHERE (\(flag(filter.appID != nil)) = 0 OR refused_decision_counts.app_id = \(.uuid(filter.appID?.rawValue ?? anyUUID)))
              AND (\(flag(filter.clientAddress != nil)) = 0 OR client_address = \(.text(filter.clientAddress ?? "")))
              AND minute >= \(.date(filter.from ?? farPast)) AND minute < \(.date(filter.to ?? farFuture))
              AND (\(flag(cursor == nil)) = 1 OR minute < \(.date(cursor?.minute ?? farFuture)) OR (minute = \(.date(cursor?.minute ?? farFuture))
                AND (refused_decision_counts.app_id, token_state, client_address) > (\(.uuid(cursor?.appID.rawValue ?? anyUUID)),
                  \(.text(cursor?.tokenState.rawValue ?? "")), \(.text(cursor?.clientAddress ?? "")))))
            ORDER BY minute DESC, refused_decision_counts.app_id, token_state, client_address
            LIMIT \(.int(Int64(limit)))
            """
        )
        var listed: [ListedRefusedCount] = []
        for row in rows {
            guard let state = ZTokenState(rawValue: try row.text("token_state")) else { throw .corruptRow("unknown token state") }
            let count = RefusedDecisionCount(
                appID: AppID(try row.uuid("app_id")),
                minute: try row.date("minute"),
                clientAddress: try row.text("client_address"),
                tokenState: state,
                decisions: Int(try row.int("decisions")),
                firstAt: try row.date("first_at"),
                lastAt: try row.date("last_at")
            )
            guard let appKey = try? AppKey(validating: try row.text("app_key")) else { throw .corruptRow("app key of a refused count") }
            listed.append(ListedRefusedCount(count: count, appKey: appKey))
        }
        return listed
    }
}
