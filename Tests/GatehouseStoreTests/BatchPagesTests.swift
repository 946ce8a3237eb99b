import Foundation
import GatehouseCore
import GatehouseTestSupport
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
                let recorded = try await SQLDeviceRiskStore.consumeAndDecide(batch, in: store.database)
                let expected: [RiskFacts.Consumption] = [
                    .consumed(pageURL: "https://shop.example/pay"), .consumed(pageURL: nil), .alreadyConsumed, .consumed(pageURL: nil),
                    .consumed(pageURL: "https://shop.example/ship"),
                ]
                #expect(recorded.map(\.facts.consumption) == expected, "mixed thresholds: \(mixed)")
                #expect(recorded[0].record.pageURL == "https://shop.example/pay" && recorded[4].record.pageURL == "https://shop.example/ship")
            }
        }
    }
}
