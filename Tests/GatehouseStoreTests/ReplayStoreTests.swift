import Foundation
import GatehouseCore
import GatehouseTestSupport
import Testing

@testable import GatehouseStore

/// Replays in the store, on both: one running an app, an abandoned one gives way, a cancel stops the
/// next page, changed decisions are kept up to their bound; a decision keeps its facts and version.
@Suite struct ReplayStoreTests {
    let riskTests = DeviceRiskStoreTests()
    var now: Date { riskTests.now }

    func run(_ app: App, at time: Date) -> ReplayRun {
        ReplayRun(
            id: UUID(),
            appID: app.id,
            status: .running,
            requestedBy: "cli:test",
            proposedVersion: nil,
            document: .empty,
            from: time.addingTimeInterval(-3_600),
            to: time.addingTimeInterval(3_600),
            total: 0,
            processed: 0,
            report: nil,
            error: nil,
            startedAt: time,
            updatedAt: time,
            finishedAt: nil
        )
    }

    func audit(_ app: App) -> AuditEntry {
        riskTests.origin.entry(at: now, action: "risk.replay.start", targetType: "replay", targetID: "x", appID: app.id, before: nil, after: nil)
    }

    @Test(arguments: TestStoreKind.available)
    func oneReplayRunsAtATimeAndAnAbandonedOneGivesWay(kind: TestStoreKind) async throws {
        try await withMigratedStore(kind) { (store, _) async throws in
            let (app, device) = try await riskTests.seed(store)
            let decision = try await riskTests.consume(store, app: app, device: device)
            let stored = try #require(try await store.deviceRisk.decision(appID: app.id, id: decision.id))
            #expect(stored.facts == decision.facts && stored.facts?.device != nil && stored.facts?.velocity != nil)

            let first = run(app, at: now)
            try await store.deviceRisk.startReplay(first, audit: audit(app))
            do {
                try await store.deviceRisk.startReplay(run(app, at: now.addingTimeInterval(30)), audit: audit(app))
                Issue.record("a second running replay was stored")
            } catch let error as StoreError {
                guard case .conflict = error else { throw error }
            }
            // A minute without progress: the first lost its instance, and the next one starts.
            let second = run(app, at: now.addingTimeInterval(ReplayRun.abandonedAfter + 1))
            try await store.deviceRisk.startReplay(second, audit: audit(app))
            #expect(try await store.deviceRisk.replay(appID: app.id, id: first.id)?.status == .failed)

            let page = try await store.deviceRisk.storedDecisions(appID: app.id, from: second.from, to: second.to, after: nil, limit: 10)
            #expect(page.decisions.map(\.id) == [decision.id] && page.decisions[0].judged?.facts == decision.facts)
            let after = try await store.deviceRisk.storedDecisions(appID: app.id, from: second.from, to: second.to, after: page.next, limit: 10)
            #expect(after.decisions.isEmpty && after.next == nil, "the position is past the last one")
            let change = ChangedDecision(
                id: decision.id,
                decidedAt: decision.decidedAt,
                before: .pass,
                after: .reject,
                scoreBefore: 0,
                scoreAfter: 80
            )
            #expect(
                try await store.deviceRisk.recordReplayProgress(
                    appID: app.id,
                    id: second.id,
                    processed: 1,
                    report: ReplayReport(),
                    changes: [change],
                    at: now
                )
            )
            try await store.deviceRisk.cancelReplay(appID: app.id, id: second.id, audit: audit(app))
            #expect(
                try await store.deviceRisk.recordReplayProgress(
                    appID: app.id,
                    id: second.id,
                    processed: 2,
                    report: ReplayReport(),
                    changes: [],
                    at: now
                ) == false
            )
            try await store.deviceRisk.finishReplay(appID: app.id, id: second.id, status: .cancelled, report: nil, error: nil, at: now)
            let cancelled = try #require(try await store.deviceRisk.replay(appID: app.id, id: second.id))
            #expect(cancelled.status == .cancelled && cancelled.processed == 2 && cancelled.report == ReplayReport())
            #expect(try await store.deviceRisk.replayChanges(appID: app.id, replayID: second.id, offset: 0, limit: 10) == [change])
            do {
                try await store.deviceRisk.cancelReplay(appID: app.id, id: second.id, audit: audit(app))
                Issue.record("a finished replay was cancelled")
            } catch let error as StoreError {
                guard case .conflict = error else { throw error }
            }
        }
    }

    /// Pages of decisions at times a `Date` does not hold exactly (PostgreSQL's microseconds), and
    /// several at one time: each decision is read exactly once.
    @Test(arguments: TestStoreKind.available)
    func everyDecisionIsReadOnceWhateverItsTime(kind: TestStoreKind) async throws {
        try await withMigratedStore(kind) { (store, _) async throws in
            let (app, device) = try await riskTests.seed(store)
            let decision = try await riskTests.consume(store, app: app, device: device)
            let offset: SQL = kind == .postgres ? "decided_at + (t % 7) * interval '333 microseconds'" : "decided_at + t % 7"
            let id: SQL = kind == .postgres ? "gen_random_uuid()" : "printf('%08x-0000-4000-8000-%012x', t, t)"
            try await store.database.query(
                """
                WITH RECURSIVE series(t) AS (SELECT 1 UNION ALL SELECT t + 1 FROM series WHERE t < 40)
                INSERT INTO risk_decisions (app_id, decision_id, decided_at, event_id, account_id, device_id, token_state, client_address, score,
                  decision, tags, policy_version, facts)
                SELECT app_id, \(id), \(offset), event_id, account_id, device_id, token_state, client_address, score, decision, tags, policy_version, facts
                FROM risk_decisions, series WHERE decision_id = \(decision.id)
                """
            )
            var seen: [UUID] = []
            var position: StoredPosition?
            repeat {
                let page = try await store.deviceRisk.storedDecisions(
                    appID: app.id,
                    from: now.addingTimeInterval(-3_600),
                    to: now.addingTimeInterval(3_600),
                    after: position,
                    limit: 3
                )
                seen += page.decisions.map(\.id)
                position = page.decisions.isEmpty ? nil : page.next
            } while position != nil
            #expect(seen.count == 41 && Set(seen).count == 41)
        }
    }
}
