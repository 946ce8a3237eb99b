import Foundation
import GatehouseCore

/// Replays: the run's row (one running an app, by a partial unique index), the stored decisions it
/// reads page by page in time order, its progress and the decisions it changed.
extension SQLDeviceRiskStore {
    /// Decisions of the app in the window, counted up to `limit` (the count stops there).
    public func countDecisions(appID: AppID, from: Date, to: Date, limit: Int) async throws(StoreError) -> Int {
        await refusedDecisions.caughtUp()
        let row = try await database.query(
            """
            SELECT count(*) AS decisions FROM (SELECT 1 FROM risk_decisions WHERE app_id = \(appID.rawValue) AND decided_at >= \(from)
              AND decided_at < \(to) LIMIT \(Int64(limit))) AS counted
            """
        ).first
        return Int(try row?.int("decisions") ?? 0)
    }

    /// Stores a new running replay with its audit entry. A running replay of the app whose progress
    /// stopped over `ReplayRun.abandonedAfter` ago is marked failed first; one still moving makes this
    /// `.conflict`. Finished replays past the newest `ReplayRun.keptPerApp` go.
    public func startReplay(_ run: ReplayRun, audit: AuditEntry) async throws(StoreError) {
        let app = run.appID.rawValue
        let stale = run.startedAt.addingTimeInterval(-ReplayRun.abandonedAfter)
        do {
            try await database.transaction { transaction in
                try await transaction.query(
                    """
                    UPDATE risk_replays SET status = 'failed', error = 'abandoned: its instance stopped', finished_at = \(run.startedAt)
                    WHERE app_id = \(app) AND status = 'running' AND updated_at < \(stale)
                    """
                )
                try await transaction.query(
                    """
                    DELETE FROM risk_replays WHERE app_id = \(app) AND status <> 'running' AND replay_id NOT IN
                      (SELECT replay_id FROM risk_replays WHERE app_id = \(app) ORDER BY started_at DESC LIMIT \(Int64(ReplayRun.keptPerApp - 1)))
                    """
                )
                try await transaction.query(
                    """
                    INSERT INTO risk_replays (replay_id, app_id, status, requested_by, proposed_version, document, window_from, window_to,
                      total, processed, started_at, updated_at)
                    VALUES (\(run.id), \(app), 'running', \(run.requestedBy), \(run.proposedVersion.map { SQLValue.int(Int64($0)) } ?? .null),
                      \(run.document.storedJSON()), \(run.from), \(run.to), \(Int64(run.total)), 0, \(run.startedAt), \(run.startedAt))
                    """
                )
                try await AuditRows.append(audit, in: transaction)
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw .unavailable(String(describing: type(of: error)))
        }
    }

    public func replay(appID: AppID, id: UUID) async throws(StoreError) -> ReplayRun? {
        try await database.query("SELECT * FROM risk_replays WHERE app_id = \(appID.rawValue) AND replay_id = \(id)").first.map(Self.replayRun)
    }

    /// Newest first.
    public func replays(appID: AppID) async throws(StoreError) -> [ReplayRun] {
        try await database.query(
            "SELECT * FROM risk_replays WHERE app_id = \(appID.rawValue) ORDER BY started_at DESC LIMIT \(Int64(ReplayRun.keptPerApp))"
        ).map(Self.replayRun)
    }

    /// One page of the window's decisions in time order, strictly after `position`; only the columns
    /// a replay reads.
    public func storedDecisions(
        appID: AppID,
        from: Date,
        to: Date,
        after position: StoredPosition?,
        limit: Int
    ) async throws(StoreError) -> (decisions: [StoredDecision], next: StoredPosition?) {
        let type: SQL = database.dialect == .postgres ? "timestamptz" : "INTEGER"
        // The first page starts at `from` itself, before any id. A row comparison, which the time index
        // reads as a range: an OR of the two would rescan the window from its start on every page.
        let startAt: SQL = position.map { "CAST(\($0.at) AS \(type))" } ?? "\(from)"
        let startID = position?.id ?? UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
        let rows = try await database.query(
            """
            SELECT decision_id, decided_at, CAST(decided_at AS TEXT) AS position, event_id, account_id, device_id, client_address, user_agent,
              token_state, decision, score, label, facts
            FROM risk_decisions WHERE app_id = \(appID.rawValue) AND decided_at < \(to)
              AND (decided_at, decision_id) > (\(startAt), \(startID))
            ORDER BY decided_at, decision_id LIMIT \(Int64(limit))
            """
        )
        let decisions = try rows.map { row throws(StoreError) in try Self.storedDecision(row, appID: appID) }
        guard let last = rows.last else { return (decisions, nil) }
        return (decisions, StoredPosition(at: try last.text("position"), id: try last.uuid("decision_id")))
    }

    /// Records a page's progress; false when the replay was cancelled (or is no longer running).
    public func recordReplayProgress(
        appID: AppID,
        id: UUID,
        processed: Int,
        report: ReplayReport,
        changes: [ChangedDecision],
        at now: Date
    ) async throws(StoreError) -> Bool {
        let reportJSON = Self.json(report)
        do {
            return try await database.transaction { transaction in
                let rows = try await transaction.query(
                    """
                    UPDATE risk_replays SET processed = \(Int64(processed)), report = \(reportJSON), updated_at = \(now)
                    WHERE app_id = \(appID.rawValue) AND replay_id = \(id) AND status = 'running' RETURNING cancel_requested
                    """
                )
                guard let row = rows.first, try row.int("cancel_requested") == 0 else { return false }
                guard !changes.isEmpty else { return true }
                let kept = try await transaction.query(
                    "SELECT count(*) AS kept FROM replay_changes WHERE app_id = \(appID.rawValue) AND replay_id = \(id)"
                ).first
                let room = ReplayRun.keptChanges - Int(try kept?.int("kept") ?? 0)
                guard room > 0 else { return true }
                let values: [SQL] = changes.prefix(room).map { change in
                    """
                    (\(appID.rawValue), \(id), \(change.id), \(change.decidedAt), \(change.before.rawValue), \(change.after.rawValue), \(Int64(change.scoreBefore)),
                     \(Int64(change.scoreAfter)))
                    """
                }
                try await transaction.query(
                    """
                    INSERT INTO replay_changes (app_id, replay_id, decision_id, decided_at, outcome_before, outcome_after, score_before, score_after)
                    VALUES \(SQL.joined(values, separator: ", ")) ON CONFLICT DO NOTHING
                    """
                )
                return true
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw .unavailable(String(describing: type(of: error)))
        }
    }

    /// Ends a running replay as `status`; a replay already ended (a cancel that came first) stays.
    public func finishReplay(
        appID: AppID,
        id: UUID,
        status: ReplayRun.Status,
        report: ReplayReport?,
        error: String?,
        at now: Date
    ) async throws(StoreError) {
        try await database.query(
            """
            UPDATE risk_replays SET status = \(status.rawValue), report = COALESCE(\(report.map(Self.json).map(SQLValue.text) ?? .null), report),
              error = \(error.map(SQLValue.text) ?? .null), updated_at = \(now), finished_at = \(now)
            WHERE app_id = \(appID.rawValue) AND replay_id = \(id) AND status = 'running'
            """
        )
    }

    /// Asks a running replay to stop (its instance stops after the page it is on, and marks it
    /// cancelled); `.notFound` for no such replay, `.conflict` for one that is not running.
    public func cancelReplay(appID: AppID, id: UUID, audit: AuditEntry) async throws(StoreError) {
        do {
            try await database.transaction { transaction in
                let rows = try await transaction.query(
                    """
                    UPDATE risk_replays SET cancel_requested = 1 WHERE app_id = \(appID.rawValue) AND replay_id = \(id) AND status = 'running'
                    RETURNING replay_id
                    """
                )
                if rows.isEmpty {
                    let exists = try await transaction.query(
                        "SELECT 1 AS one FROM risk_replays WHERE app_id = \(appID.rawValue) AND replay_id = \(id)"
                    )
                    throw exists.isEmpty ? StoreError.notFound("no replay \(id)") : StoreError.conflict("replay \(id) is not running")
                }
                try await AuditRows.append(audit, in: transaction)
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw .unavailable(String(describing: type(of: error)))
        }
    }

    public func replayChanges(appID: AppID, replayID: UUID, offset: Int, limit: Int) async throws(StoreError) -> [ChangedDecision] {
        try await database.query(
            """
            SELECT * FROM replay_changes WHERE app_id = \(appID.rawValue) AND replay_id = \(replayID) ORDER BY decided_at, decision_id
            LIMIT \(Int64(limit)) OFFSET \(Int64(offset))
            """
        ).map { row throws(StoreError) in
            guard let before = RiskDecision(rawValue: try row.text("outcome_before")),
                let after = RiskDecision(rawValue: try row.text("outcome_after"))
            else { throw .corruptRow("replay change") }
            return ChangedDecision(
                id: try row.uuid("decision_id"),
                decidedAt: try row.date("decided_at"),
                before: before,
                after: after,
                scoreBefore: Int(try row.int("score_before")),
                scoreAfter: Int(try row.int("score_after"))
            )
        }
    }
}
