import Foundation
import Testing

@testable import GatehouseCore

/// A forged flood's storage: the first few refused decisions of a key whole, the rest counted, keys bounded.
@Suite struct RefusedDecisionSamplerTests {
    let app = AppID(UUID())
    /// 12:00:00 UTC on a day, on a minute's edge.
    let noon = Date(timeIntervalSince1970: 1_795_000_800)

    func refused(_ state: ZTokenState = .forged, address: String? = "203.0.113.7", app: AppID? = nil, at: Date) throws -> RiskDecisionRecord {
        RiskDecisionRecord(
            id: UUID(),
            appID: app ?? self.app,
            eventID: try EventID(validating: 3301),
            accountID: try AccountID(validating: "a"),
            deviceID: nil,
            tokenID: nil,
            tokenState: state,
            clientAddress: address,
            userAgent: nil,
            pageURL: nil,
            verdict: RiskVerdict(decision: .reject, score: 100, tags: [], rules: []),
            decidedAt: at
        )
    }

    func stored(_ admission: RefusedDecisionSampler.Admission) -> Bool {
        if case .store = admission { return true }
        return false
    }

    func counted(_ admission: RefusedDecisionSampler.Admission) -> RefusedDecisionCount? {
        if case .count(let count) = admission { return count }
        return nil
    }

    @Test func theFirstFewOfAKeyAreStoredAndTheRestCounted() throws {
        var sampler = RefusedDecisionSampler()
        let admitted = try (0..<8).map { sampler.admit(try refused(at: noon.addingTimeInterval(Double($0)))) }
        #expect(admitted.prefix(RefusedDecisionSampler.fullRowsPerKey).allSatisfy(stored))
        let count = try #require(counted(admitted[5]))
        #expect(count.minute == noon && count.clientAddress == "203.0.113.7" && count.tokenState == .forged && count.decisions == 1)
        #expect(count.firstAt == noon.addingTimeInterval(5) && count.lastAt == noon.addingTimeInterval(5))
        #expect(counted(admitted[7])?.key == count.key)
        // Another state, address or app is a key of its own, with its own samples.
        #expect(stored(sampler.admit(try refused(.expired, at: noon.addingTimeInterval(9)))))
        #expect(stored(sampler.admit(try refused(address: "203.0.113.8", at: noon.addingTimeInterval(9)))))
        #expect(stored(sampler.admit(try refused(app: AppID(UUID()), at: noon.addingTimeInterval(9)))))
    }

    @Test func aNewMinuteSamplesAgainAndALateOneIsCounted() throws {
        var sampler = RefusedDecisionSampler()
        for second in 0..<10 { _ = sampler.admit(try refused(at: noon.addingTimeInterval(Double(second)))) }
        let next = noon.addingTimeInterval(61)
        #expect(stored(sampler.admit(try refused(at: next))))
        // Stamped in the minute before, after the sampler moved on: counted into that minute's row.
        let late = counted(sampler.admit(try refused(at: noon.addingTimeInterval(59.5))))
        #expect(late?.minute == noon && late?.decisions == 1)
    }

    @Test func keysPastTheMinutesBoundAreCountedUnderOneAddress() throws {
        var sampler = RefusedDecisionSampler()
        for number in 0..<RefusedDecisionSampler.maximumKeysPerMinute {
            #expect(stored(sampler.admit(try refused(address: "10.0.\(number / 256).\(number % 256)", at: noon))))
        }
        let past = counted(sampler.admit(try refused(address: "10.99.0.1", at: noon.addingTimeInterval(1))))
        #expect(past?.clientAddress == RefusedDecisionSampler.otherAddresses)
        // A key seen before the bound keeps sampling.
        #expect(stored(sampler.admit(try refused(address: "10.0.0.0", at: noon.addingTimeInterval(2)))))
    }

    @Test func countsOfAKeyAddUp() throws {
        var sampler = RefusedDecisionSampler()
        for _ in 0..<RefusedDecisionSampler.fullRowsPerKey { _ = sampler.admit(try refused(at: noon)) }
        var total = try #require(counted(sampler.admit(try refused(at: noon.addingTimeInterval(30)))))
        total.add(try #require(counted(sampler.admit(try refused(at: noon.addingTimeInterval(10))))))
        total.add(try #require(counted(sampler.admit(try refused(at: noon.addingTimeInterval(50))))))
        #expect(total.decisions == 3 && total.firstAt == noon.addingTimeInterval(10) && total.lastAt == noon.addingTimeInterval(50))
    }
}
