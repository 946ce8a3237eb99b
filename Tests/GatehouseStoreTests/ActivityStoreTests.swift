import Foundation
import GatehouseCore
import GatehouseStore
import GatehouseTestSupport
import Testing

/// The console's counters on both stores: added in memory, written by a flush, summed per bar,
/// and purged with their app's decisions.
@Suite struct ActivityStoreTests {
    let origin = ChangeOrigin(actor: Actor(kind: .cli, name: "test"), requestID: nil, sourceAddress: nil)
    let now = Date(millisecondsSince1970: 1_800_000_000_000)

    func createApp(in store: SQLStore) async throws -> App {
        var generator = SystemRandomNumberGenerator()
        let app = try AppDraft(name: "Shop", platforms: ["ios"]).makeApp(at: now, using: &generator)
        let audit = origin.entry(at: now, action: "app.create", targetType: "app", targetID: "x", appID: app.id, before: nil, after: nil)
        try await store.apps.createApp(app, secrets: [], audit: audit)
        return app
    }

    @Test(arguments: TestStoreKind.available)
    func countsAreSummedPerBarAndPurgedWithTheirApp(kind: TestStoreKind) async throws {
        try await withMigratedStore(kind) { store, _ in
            let app = try await createApp(in: store)
            let window = OverviewWindow.hour
            let start = window.start(at: now)
            for minutesAgo in [0, 0, 1, 30, 30, 30, 59, 120] {
                let at = now.addingTimeInterval(-Double(minutesAgo) * 60)
                store.console.countActivity([ActivityKey(appID: app.id, at: at, metric: .decision, label: minutesAgo == 30 ? "reject" : "pass")])
            }
            store.console.countActivity([ActivityKey(appID: app.id, at: now, metric: .captchaPassed, label: "")])
            let unflushed = try await store.console.activitySummary(appID: app.id, since: start, bucketSeconds: window.bucketSeconds)
            #expect(unflushed.decisionsByBucket.isEmpty, "nothing reaches the table before a flush")
            try await store.console.flushActivity()
            // A second flush adds to the same rows.
            store.console.countActivity([ActivityKey(appID: app.id, at: now, metric: .decision, label: "pass")])
            try await store.console.flushActivity()
            let summary = try await store.console.activitySummary(appID: app.id, since: start, bucketSeconds: window.bucketSeconds)
            let bars = Dictionary(summary.decisionsByBucket.map { ("\($0.bucket)/\($0.outcome)", $0.count) }, uniquingKeysWith: +)
            #expect(bars == ["59/pass": 3, "58/pass": 1, "29/reject": 3, "0/pass": 1], "\(bars)")
            #expect(summary.totals[.decision] == ["pass": 5, "reject": 3], "the one two hours ago is outside the window")
            #expect(summary.totals[.captchaPassed] == ["": 1])
            // More counters than one statement carries (500): every one arrives.
            store.console.countActivity((0..<1_203).map { ActivityKey(appID: app.id, at: now, metric: .tag, label: "tag-\($0)") })
            try await store.console.flushActivity()
            let tags = try await store.console.activitySummary(appID: app.id, since: start, bucketSeconds: window.bucketSeconds).totals[.tag]
            #expect(tags?.count == 1_203 && tags?.values.allSatisfy { $0 == 1 } == true)

            // Purged with the decisions: the app keeps 30 days, whole UTC days.
            _ = try await store.retention.purgeExpired(at: now.addingTimeInterval(29 * 86_400))
            #expect(try await store.console.activitySummary(appID: app.id, since: .distantPast, bucketSeconds: 60).totals[.decision]?["pass"] == 6)
            _ = try await store.retention.purgeExpired(at: now.addingTimeInterval(32 * 86_400))
            #expect(try await store.console.activitySummary(appID: app.id, since: .distantPast, bucketSeconds: 60).totals.isEmpty)
        }
    }

    @Test(arguments: TestStoreKind.available)
    func aFlushReturnsOnlyOnceTheCountsTakenBeforeItAreWritten(kind: TestStoreKind) async throws {
        // The overview flushes, then reads: a flush that finds the counts already taken by one still
        // writing them must wait for it, or the read misses them.
        try await withMigratedStore(kind) { store, _ in
            let app = try await createApp(in: store)
            let console = store.console
            for round in 1...20 {
                console.countActivity((0..<600).map { ActivityKey(appID: app.id, at: now, metric: .tag, label: "tag-\($0)") })
                let periodic = Task { try await console.flushActivity() }
                await Task.yield()
                try await console.flushActivity()
                let tags = try await console.activitySummary(appID: app.id, since: .distantPast, bucketSeconds: 60).totals[.tag]
                #expect(tags?.count == 600 && tags?.values.allSatisfy { $0 == round } == true, "round \(round)")
                try await periodic.value
            }
        }
    }
}
