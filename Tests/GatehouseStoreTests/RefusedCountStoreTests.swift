import Foundation
import GatehouseCore
import GatehouseTestSupport
import Testing

@testable import GatehouseStore

/// A flood of refused tokens on the store: a few decisions of a key stored whole, the rest counted
/// into one row, nothing lost, the rows listed newest first and purged with the app's decisions.
@Suite struct RefusedCountStoreTests {
    let base = DeviceRiskStoreTests()

    @Test(arguments: TestStoreKind.available)
    func aFloodIsSampledThenCountedAndPurgedWithTheDecisions(kind: TestStoreKind) async throws {
        try await withMigratedStore(kind) { (store, _) async throws in
            let (app, _) = try await base.seed(store)
            let flood = 300
            try await withThrowingTaskGroup(of: Void.self) { group in
                for number in 0..<flood {
                    let query = try base.keys(app, nil, account: "u\(number)", address: "203.0.113.9")
                    group.addTask { _ = try await store.deviceRisk.recordRiskDecision(query) }
                }
                try await group.waitForAll()
            }
            // One more address, in the same minute: samples of its own.
            for number in 0..<2 {
                _ = try await store.deviceRisk.recordRiskDecision(try base.keys(app, nil, account: "v\(number)", address: "2001:db8::5"))
            }
            let stored = try await store.deviceRisk.decisions(matching: DecisionFilter(appID: app.id), after: nil, limit: 500)
            #expect(stored.filter { $0.record.clientAddress == "203.0.113.9" }.count == RefusedDecisionSampler.fullRowsPerKey)
            #expect(stored.filter { $0.record.clientAddress == "2001:db8::5" }.count == 2)
            let counts = try await store.deviceRisk.refusedCounts(matching: RefusedCountFilter(appID: app.id), after: nil, limit: 10)
            #expect(counts.count == 1)
            let count = try #require(counts.first?.count)
            #expect(count.clientAddress == "203.0.113.9" && count.tokenState == .forged)
            #expect(count.decisions == flood - RefusedDecisionSampler.fullRowsPerKey)
            #expect(count.minute == Date(timeIntervalSince1970: (base.now.addingTimeInterval(1).timeIntervalSince1970 / 60).rounded(.down) * 60))
            // Every decision was written, whole or counted; none lost.
            let behind = store.deviceRisk.decisionsBehind
            #expect(behind.written == flood + 2 && behind.lost == 0 && behind.pending == 0)

            // The next minute samples again, and the listing pages newest first.
            for number in 0..<8 {
                _ = try await store.deviceRisk.recordRiskDecision(
                    try base.keys(app, nil, account: "w\(number)", address: "203.0.113.9", at: base.now.addingTimeInterval(61))
                )
            }
            let first = try await store.deviceRisk.refusedCounts(matching: RefusedCountFilter(appID: app.id), after: nil, limit: 1)
            #expect(first.map(\.count.decisions) == [3])
            let cursor = RefusedCountCursor(minute: first[0].count.minute, appID: app.id, tokenState: .forged, clientAddress: "203.0.113.9")
            let older = try await store.deviceRisk.refusedCounts(matching: RefusedCountFilter(appID: app.id), after: cursor, limit: 5)
            #expect(older.map(\.count.decisions) == [flood - RefusedDecisionSampler.fullRowsPerKey])
            let elsewhere = try await store.deviceRisk.refusedCounts(
                matching: RefusedCountFilter(clientAddress: "198.51.100.1"),
                after: nil,
                limit: 5
            )
            #expect(elsewhere.isEmpty)

            // Past the app's retention, the counts go with the decisions.
            _ = try await store.retention.purgeExpired(at: base.now.addingTimeInterval(Double(app.settings.retentionDays + 2) * 86_400))
            #expect(try await store.deviceRisk.refusedCounts(matching: RefusedCountFilter(appID: app.id), after: nil, limit: 10).isEmpty)
        }
    }
}
