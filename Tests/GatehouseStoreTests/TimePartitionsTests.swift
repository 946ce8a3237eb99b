import Foundation
import GatehouseCore
import Testing

@testable import GatehouseStore

/// Which time ranges the keeper creates and drops, decided without a database.
@Suite struct TimePartitionsTests {
    func at(_ text: String) -> Date { try! Date(text, strategy: .iso8601) }
    let decisions = PartitionedTable.decisions
    let nonces = PartitionedTable.sdkNonces

    @Test func rangesAreNamedByTheirUTCStartAndReadBack() {
        let start = PartitionedTable.seconds(at("2026-11-24T00:00:00Z"))
        #expect(decisions.rangeName(start: start) == "risk_decisions_p2026112400")
        #expect(decisions.parse("risk_decisions_p2026112400") == .range(start: start))
        #expect(decisions.parse("risk_decisions_before_2026112500") == .before(bound: start + 86_400))
        #expect(nonces.parse("sdk_nonces_p2026112418") == .range(start: start + 18 * 3_600))
        // Not a range of this table: another table's, a day that does not exist, a start off the
        // width, the default partition, anything else.
        for name in [
            "risk_decisions_default", "risk_decisions_p2026113100", "risk_decisions_p2026112403", "risk_decisions_p202611240",
            "risk_decisions_p20261124000", "risk_decisions_pabcdefghij", "sdk_nonces_p2026112400", "risk_decisions_before_2026112",
            "risk_decisions_p-026112400",
        ] {
            #expect(decisions.parse(name) == nil, "\(name)")
        }
        #expect(nonces.parse("sdk_nonces_p2026112403") == nil)
    }

    @Test func everyHourSince1970FormatsAndReadsBack() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let hour = Int.random(in: 0..<(200 * 365 * 24), using: &generator) * 3_600
            #expect(PartitionedTable.parseStamp(PartitionedTable.stamp(hour)) == hour)
        }
        #expect(PartitionedTable.stamp(PartitionedTable.seconds(at("2028-02-29T23:00:00Z"))) == "2028022923")
        #expect(PartitionedTable.parseStamp("2027022900") == nil)
    }

    @Test func aFreshTableGetsTheRangeBeforeTheCurrentOneAndTwoAhead() {
        let plan = decisions.plan(existing: ["risk_decisions_default"], at: at("2026-11-24T10:00:00Z"), horizon: .distantPast)
        #expect(
            plan.create.map(\.name) == [
                "risk_decisions_p2026112300", "risk_decisions_p2026112400", "risk_decisions_p2026112500", "risk_decisions_p2026112600",
            ]
        )
        #expect(plan.create[1].from == at("2026-11-24T00:00:00Z") && plan.create[1].to == at("2026-11-25T00:00:00Z"))
        #expect(plan.drop.isEmpty)
        let sixHours = nonces.plan(existing: [], at: at("2026-11-24T10:00:00Z"), horizon: at("2026-11-24T09:59:00Z"))
        // The range that ended at 06:00 is past the horizon already: not created only to be dropped.
        #expect(sixHours.create.map(\.name) == ["sdk_nonces_p2026112406", "sdk_nonces_p2026112412", "sdk_nonces_p2026112418"])
    }

    @Test func rangesStartAfterTheRowsFromBeforeTheMigration() {
        let plan = decisions.plan(
            existing: ["risk_decisions_before_2026112500", "risk_decisions_default", "risk_decisions_p2026112500"],
            at: at("2026-11-24T10:00:00Z"),
            horizon: .distantPast
        )
        #expect(plan.create.map(\.name) == ["risk_decisions_p2026112600"])
    }

    @Test func rangesGoWholeOnceTheyEndAtOrBeforeTheHorizon() {
        let existing = [
            "risk_decisions_before_2026112300", "risk_decisions_p2026112300", "risk_decisions_p2026112400", "risk_decisions_p2026112500",
            "risk_decisions_default", "risk_decisions_p2026112600", "unrelated_table",
        ]
        let plan = decisions.plan(existing: existing, at: at("2026-11-25T10:00:00Z"), horizon: at("2026-11-25T00:00:00Z"))
        #expect(plan.drop == ["risk_decisions_before_2026112300", "risk_decisions_p2026112300", "risk_decisions_p2026112400"])
        #expect(plan.create.map(\.name) == ["risk_decisions_p2026112700"])
        let sooner = decisions.plan(existing: existing, at: at("2026-11-25T10:00:00Z"), horizon: at("2026-11-24T23:59:59Z"))
        #expect(sooner.drop == ["risk_decisions_before_2026112300", "risk_decisions_p2026112300"])
    }

    /// Retention counts whole UTC days, so that a day's range can go whole: a decision of day D goes
    /// when day D + retention + 1 begins.
    @Test func decisionsAreKeptForWholeDays() {
        let settings = AppSettings(ztokenTTLSeconds: 300, retentionDays: 30)
        #expect(settings.oldestDecisionKept(at: at("2026-12-25T00:00:00Z")) == at("2026-11-25T00:00:00Z"))
        #expect(settings.oldestDecisionKept(at: at("2026-12-25T23:59:59Z")) == at("2026-11-25T00:00:00Z"))
        #expect(settings.oldestDecisionKept(at: at("2026-12-26T00:00:00Z")) == at("2026-11-26T00:00:00Z"))
    }
}
