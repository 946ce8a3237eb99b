import Foundation
import GatehouseCore
import GatehouseTestSupport
import Synchronization
import Testing

@testable import GatehouseStore

/// PostgreSQL's batches read, then write once with no transaction around the two: a token that another
/// batch (another instance) consumes between them must come out `replayed`, with its decision stored
/// once and nothing of its consumption's.
extension DeviceRiskStoreTests {
    @Test func aTokenConsumedBetweenTheReadAndTheWriteIsAReplay() async throws {
        guard TestStoreKind.available.contains(.postgres) else { return }
        try await withMigratedStore(.postgres) { (store, _) async throws in
            let (app, device) = try await seed(store)
            let (raced, alone) = (try mint(app: app, device: device, account: "raced"), try mint(app: app, device: device, account: "alone"))
            // From an address of its own, whose pair only this batch's raced query would write.
            let batch = [
                try pending(try keys(app, raced, account: "raced", address: "203.0.113.9")), try pending(try keys(app, alone, account: "alone")),
            ]
            // The other batch: the raced token's own query, in full, once this batch has read.
            let rival = try pending(try keys(app, raced, account: "raced"))
            let racing = RacingDatabase(inner: store.database) {
                _ = try await SQLDeviceRiskStore.consumeAndDecide([rival], in: store.database, writingBehind: store.deviceRisk.refusedDecisions)
            }
            let recorded = try await SQLDeviceRiskStore.consumeAndDecide(batch, in: racing, writingBehind: store.deviceRisk.refusedDecisions)
            #expect(racing.raced)
            // The replay found at the write costs its batch no statement more: its decision goes behind the answers.
            #expect(racing.statementsAfterTheWrite == 0)
            await store.deviceRisk.catchUpWritesBehind()
            #expect(recorded.map(\.facts.consumption) == [.alreadyConsumed, .consumed(pageURL: nil)])
            // `pending`'s policy registers no event: a consumed token is judged `wrongEvent`, not `fresh`.
            #expect(recorded.map(\.record.tokenState) == [.replayed, .wrongEvent])

            func count(_ sql: SQL) async throws -> Int64? { try await store.database.query(sql).first?.int("n") }
            // One consumption each; the raced token's two decisions: the rival's consuming one and this batch's replay.
            #expect(try await count("SELECT count(*) AS n FROM consumed_ztokens WHERE app_id = \(app.id.rawValue)") == 2)
            let states = try await store.database.query(
                "SELECT token_state FROM risk_decisions WHERE app_id = \(app.id.rawValue) AND token_id = \(raced.tokenID) ORDER BY token_state"
            )
            #expect(try states.map { try $0.text("token_state") } == ["replayed", "wrongEvent"])
            #expect(try await store.deviceRisk.decision(appID: app.id, id: recorded[0].record.id)?.tokenState == .replayed)
            #expect(try await store.deviceRisk.decision(appID: app.id, id: recorded[1].record.id)?.tokenState == .wrongEvent)
            // The pairs are the winners': none from the replay's address.
            #expect(try await count("SELECT count(*) AS n FROM velocity_edges WHERE app_id = \(app.id.rawValue) AND subject = '203.0.113.9'") == 0)
            #expect(
                try await count(
                    "SELECT count(*) AS n FROM velocity_edges WHERE app_id = \(app.id.rawValue) AND kind = 1 AND subject = \(device.id.rawValue)"
                )
                    == 2
            )
        }
    }
}

/// The store's database, which runs `race` once just before the batch's consuming write, and counts
/// the statements after it.
private final class RacingDatabase: WrappingDatabase {
    let inner: any SQLDatabase
    private let race: @Sendable () async throws -> Void
    private let ran = Mutex(false)
    private let afterTheWrite = Mutex(0)

    init(inner: any SQLDatabase, race: @escaping @Sendable () async throws -> Void) {
        self.inner = inner
        self.race = race
    }

    var raced: Bool { ran.withLock { $0 } }
    var statementsAfterTheWrite: Int { afterTheWrite.withLock { $0 } }

    func query(_ sql: SQL) async throws(StoreError) -> [SQLRow] {
        if raced { afterTheWrite.withLock { $0 += 1 } }
        return try await inner.query(sql)
    }

    func query<Statement: PreparedSQL>(_ statement: Statement.Type, _ sql: SQL) async throws(StoreError) -> [SQLRow] {
        if raced { afterTheWrite.withLock { $0 += 1 } }
        if statement == SQLDeviceRiskStore.ConsumingWrite.self,
            !ran.withLock({ ran in
                defer { ran = true }
                return ran
            })
        {
            do { try await race() } catch { throw .unavailable("the race: \(error)") }
        }
        return try await inner.query(statement, sql)
    }
}
