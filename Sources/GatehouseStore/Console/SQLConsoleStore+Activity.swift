// Console: the operators' web pages at /console, signed in with an admin token.
// Serves the operators of every seed's server half, as the admin API does; no SDK calls it.

import Foundation
import GatehouseCore
import Synchronization

/// Counts of what the service saw, per app and minute, for the console's overview: kept in memory
/// and added to `activity_minutes` every few seconds (`StoreService`), so that a flood costs one
/// addition per request here and one upsert per counter per flush there, never a hot row per request.
/// A crash loses the counts of the last flush interval; the decisions themselves are in their table.
final class ActivityTally: Sendable {
    private let pending = Mutex<[ActivityKey: Int]>([:])
    /// Distinct counters held between flushes at most: a database that stays away cannot grow them
    /// without end (a flood's tags and outcomes are few; its minutes pass).
    static let capacity = 50_000

    func add(_ keys: [ActivityKey]) {
        pending.withLock { counts in
            for key in keys where counts[key] != nil || counts.count < Self.capacity { counts[key, default: 0] += 1 }
        }
    }

    func take() -> [ActivityKey: Int] {
        pending.withLock { counts in
            defer { counts = [:] }
            return counts
        }
    }

    /// Puts back what a failed flush took, to go with the next.
    func restore(_ counts: [ActivityKey: Int]) {
        pending.withLock { current in
            for (key, count) in counts where current[key] != nil || current.count < Self.capacity { current[key, default: 0] += count }
        }
    }
}

/// The overview's numbers.
public struct ActivitySummary: Sendable {
    /// Decisions by outcome in each of the window's buckets (0 the oldest).
    public var decisionsByBucket: [(bucket: Int, outcome: String, count: Int)] = []
    /// Every metric's total per label over the window.
    public var totals: [ActivityMetric: [String: Int]] = [:]
    /// Addresses, accounts and devices with the most rejected decisions in the window (counted over
    /// the newest `rejectedSample` of them at most, so that the page's work has a bound).
    public var topRejected: [String: [(label: String, count: Int)]] = [:]
    /// Labelled decisions of the window, by their last label and outcome.
    public var labelled: [(label: String, decision: String, count: Int)] = []
}

/// What a capability's store counts for the console as it happens (in memory, `ActivityTally`).
public protocol ActivityCounting: Sendable {
    func countActivity(_ keys: [ActivityKey])
}

/// The console's counters: added in memory as things happen, read back per app for the overview.
public protocol ActivityStore: ActivityCounting {
    func flushActivity() async throws(StoreError)
    /// The window from `start`, its decisions summed per bucket of `bucketSeconds` in the database.
    func activitySummary(appID: AppID, since start: Date, bucketSeconds: TimeInterval) async throws(StoreError) -> ActivitySummary
}

extension SQLConsoleStore: ActivityStore {
    /// Rejected decisions read at most for the rankings.
    public static let rejectedSample = 20_000

    public func countActivity(_ keys: [ActivityKey]) {
        activity.add(keys)
    }

    /// Adds the counts gathered since the last flush to the table, in one transaction. Flushes take
    /// turns: the overview flushes before it reads, and a flush that found the counts already taken by
    /// the periodic one, still writing them, read the table without them (seen in `ConsoleTests` on a
    /// loaded machine); two at once could also lock the same rows in opposite orders.
    public func flushActivity() async throws(StoreError) {
        await activityFlushes.enter()
        do {
            try await flushPendingActivity()
        } catch {
            await activityFlushes.leave()
            throw error
        }
        await activityFlushes.leave()
    }

    private func flushPendingActivity() async throws(StoreError) {
        let counts = activity.take()
        guard !counts.isEmpty else { return }
        do {
            try await database.transaction { transaction in
                // One statement per 500 counters: a flood's minute of many tags costs a few round trips.
                // Rows in one order, as every instance writes them: instances flushing the same minute's
                // counters at once would otherwise lock them in opposite orders.
                let entries = counts.sorted {
                    ($0.key.appID, $0.key.metric.rawValue, $0.key.minute, $0.key.label) < (
                        $1.key.appID, $1.key.metric.rawValue, $1.key.minute, $1.key.label
                    )
                }
                for start in stride(from: 0, to: entries.count, by: 500) {
                    let chunk = entries[start..<min(start + 500, entries.count)]
                    let rows = chunk.map { key, count -> SQL in
                        "(\(key.appID.rawValue), \(key.metric.rawValue), \(Self.epochMinute(key.minute)), \(key.label), \(count))"
                    }
                    try await transaction.query(
                        """
                        INSERT INTO activity_minutes (app_id, metric, minute, label, count) VALUES \(SQL.joined(rows, separator: ", "))
                        ON CONFLICT (app_id, metric, minute, label) DO UPDATE SET count = activity_minutes.count + excluded.count
                        """
                    )
                }
            }
        } catch {
            activity.restore(counts)
            if let error = error as? StoreError { throw error }
            throw .unavailable(String(describing: type(of: error)))
        }
    }

    public func activitySummary(appID: AppID, since start: Date, bucketSeconds: TimeInterval) async throws(StoreError) -> ActivitySummary {
        var summary = ActivitySummary()
        let first = Self.epochMinute(start)
        summary.decisionsByBucket = try await database.query(
            """
            SELECT bucket, label, CAST(sum(count) AS bigint) AS total FROM (
                SELECT (minute - \(first)) / \(Int64(bucketSeconds / 60)) AS bucket, label, count FROM activity_minutes
                WHERE app_id = \(appID.rawValue) AND metric = 'decision' AND minute >= \(first)
            ) AS minutes GROUP BY bucket, label
            """
        ).map { row throws(StoreError) in (Int(try row.int("bucket")), try row.text("label"), Int(try row.int("total"))) }
        let totals = try await database.query(
            """
            SELECT metric, label, CAST(sum(count) AS bigint) AS total FROM activity_minutes WHERE app_id = \(.uuid(appID.rawValue)) AND minute >=
              \(.int(first)) GROUP BY metric, label
            """
        )
        for row in totals {
            guard let metric = ActivityMetric(rawValue: try row.text("metric")) else { continue }
            summary.totals[metric, default: [:]][try row.text("label")] = Int(try row.int("total"))
        }
        for column in ["client_address", "account_id", "device_id"] {
            summary.topRejected[column] = try await database.query(
                """
                SELECT value, count(*) AS hits FROM (
                    SELECT \(identifier: column) AS value FROM risk_decisions
                    WHERE app_id = \(.uuid(appID.rawValue)) AND decision = 'reject' AND decided_at >= \(.date(start)) ORDER BY decided_at DESC LIMIT
                      \(.int(Int64(Self.rejectedSample)))
                ) AS newest WHERE value IS NOT NULL GROUP BY value ORDER BY hits DESC, value LIMIT 10
                """
            ).map { row throws(StoreError) in (try row.text("value"), Int(try row.int("hits"))) }
        }
        // The labelled decisions' own index holds both columns: the count reads no table row.
        summary.labelled = try await database.query(
            """
            SELECT label, decision, count(*) AS hits FROM risk_decisions
            WHERE app_id = \(.uuid(appID.rawValue)) AND label IS NOT NULL AND decided_at >= \(.date(start)) GROUP BY label, decision
            """
        ).map { row throws(StoreError) in (try row.text("label"), try row.text("decision"), Int(try row.int("hits"))) }
        return summary
    }

    /// The console's counters follow their app's decisions out (called by the purge, under its lock).
    static func purgeActivity(of app: AppID, before cutoff: Date, in locked: any SQLDatabase) async throws(StoreError) {
        try await locked.query("DELETE FROM activity_minutes WHERE app_id = \(.uuid(app.rawValue)) AND minute < \(.int(epochMinute(cutoff)))")
    }

    static func epochMinute(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 / 60).rounded(.down))
    }
}

extension SQLConsoleStore: ExpiringRows {
    /// The console's counters of each app go with its decisions.
    func deleteExpired(_ round: RetentionRound, in locked: any SQLDatabase) async throws -> PurgeReport {
        for (app, since) in round.decisionsKept { try await Self.purgeActivity(of: app, before: since, in: locked) }
        return PurgeReport()
    }
}
