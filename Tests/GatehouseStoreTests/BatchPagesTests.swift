import Foundation
import GatehouseCore
import GatehouseTestSupport
import Synchronization
import Testing

@testable import GatehouseStore

/// A batch's bridge tokens each find their own page, whichever statements read the batch: on
/// PostgreSQL a batch judged by one set of thresholds reads the pages with its devices, a batch
/// judged by two (and every batch on SQLite) reads them in its transaction, in one statement.
extension DeviceRiskStoreTests {
    @Test(arguments: TestStoreKind.available)
    func aBatchsBridgeTokensEachFindTheirPage(kind: TestStoreKind) async throws {
        try await withMigratedStore(kind) { (store, _) async throws in
            let (app, device) = try await seed(store)
            let strict = RiskRules.effective(app: RiskRules(maxDeviceEventsPerMinute: 2, maxDeviceAccountsPerDay: 1), event: nil)
            for mixed in [false, true] {
                let (paid, shipped) = (try mint(app: app, device: device, page: true), try mint(app: app, device: device, page: true))
                let (unnoted, plain) = (try mint(app: app, device: device, page: true), try mint(app: app, device: device))
                for (claims, page) in [(paid, "https://shop.example/pay"), (shipped, "https://shop.example/ship")] {
                    try await store.deviceRisk.recordZTokenPage(appID: app.id, tokenID: claims.tokenID, pageURL: page, expiresAt: claims.expiresAt)
                }
                // The paid token twice: its second query is a replay, which finds no page.
                let batch = [
                    try pending(try keys(app, paid)), try pending(try keys(app, plain)), try pending(try keys(app, paid)),
                    try pending(try keys(app, unnoted)),
                    try pending(try keys(app, shipped), rules: mixed ? strict : RiskRules.effective(app: nil, event: nil)),
                ]
                let recorded = try await SQLDeviceRiskStore.consumeAndDecide(
                    batch,
                    in: store.database,
                    writingBehind: store.deviceRisk.refusedDecisions
                )
                let expected: [RiskFacts.Consumption] = [
                    .consumed(pageURL: "https://shop.example/pay"), .consumed(pageURL: nil), .alreadyConsumed, .consumed(pageURL: nil),
                    .consumed(pageURL: "https://shop.example/ship"),
                ]
                #expect(recorded.map(\.facts.consumption) == expected, "mixed thresholds: \(mixed)")
                #expect(recorded[0].record.pageURL == "https://shop.example/pay" && recorded[4].record.pageURL == "https://shop.example/ship")
            }
        }
    }

    /// The pages are read in one statement for the batch (none where it holds no bridge token), and
    /// each id is looked up by the pages' key among an app's many, on both stores: not a scan of them.
    @Test(arguments: TestStoreKind.available)
    func aBatchReadsItsPagesInOneStatementByTheirKey(kind: TestStoreKind) async throws {
        try await withMigratedStore(kind) { (store, _) async throws in
            let (app, device) = try await seed(store)
            let later = now.addingTimeInterval(3_600)
            try await store.database.query(
                """
                WITH RECURSIVE g (t) AS (SELECT 1 UNION ALL SELECT t + 1 FROM g WHERE t < 20000)
                INSERT INTO ztoken_pages (app_id, token_id, page_url, expires_at)
                SELECT \(app.id.rawValue), 'other-' || t, 'https://shop.example/other', \(later) FROM g
                """
            )
            try await store.database.query("ANALYZE ztoken_pages")
            let bridged = try (0..<3).map { _ in try mint(app: app, device: device, page: true) }
            for (number, claims) in bridged.enumerated() {
                try await store.deviceRisk.recordZTokenPage(
                    appID: app.id,
                    tokenID: claims.tokenID,
                    pageURL: "https://shop.example/\(number)",
                    expiresAt: claims.expiresAt
                )
            }
            let batch = try (bridged + [try mint(app: app, device: device)]).map { try pending(try keys(app, $0)) }
            let won = Set(batch.map { ConsumedID(app: $0.query.appID, token: $0.tokenID) })

            let counting = CountingDatabase(inner: store.database)
            let consumptions = try await SQLDeviceRiskStore.consumptions(of: batch, consumed: won, in: counting)
            let expected: [RiskFacts.Consumption] = (0..<3).map { .consumed(pageURL: "https://shop.example/\($0)") } + [.consumed(pageURL: nil)]
            #expect(consumptions == expected)
            #expect(counting.statements == 1, "the batch's three pages in one statement")
            _ = try await SQLDeviceRiskStore.consumptions(of: [batch[3]], consumed: won, in: counting)
            #expect(counting.statements == 1, "no statement for a batch without a bridge token")

            let statement = SQLDeviceRiskStore.pagesStatement(Array(batch.prefix(3)))
            switch kind {
            case .postgres:
                let plan = try await store.database.query("EXPLAIN \(statement)").map { try $0.text("QUERY PLAN") }.joined(separator: "\n")
                #expect(plan.contains("ztoken_pages_pkey") && !plan.contains("Seq Scan on ztoken_pages"), "\(plan)")
            case .sqlite:
                let steps = try await store.database.query("EXPLAIN QUERY PLAN \(statement)").map { try $0.text("detail") }
                #expect(steps.contains { $0.hasPrefix("SEARCH p USING") } && !steps.contains { $0.hasPrefix("SCAN p") }, "\(steps)")
            }
        }
    }
}

/// The store's database, counting the statements run through it.
private final class CountingDatabase: WrappingDatabase {
    let inner: any SQLDatabase
    private let count = Mutex(0)

    init(inner: any SQLDatabase) { self.inner = inner }

    var statements: Int { count.withLock { $0 } }

    func query(_ sql: SQL) async throws(StoreError) -> [SQLRow] {
        count.withLock { $0 += 1 }
        return try await inner.query(sql)
    }

    func query<Statement: PreparedSQL>(_ statement: Statement.Type, _ sql: SQL) async throws(StoreError) -> [SQLRow] {
        count.withLock { $0 += 1 }
        return try await inner.query(statement, sql)
    }
}
