import Foundation
import GatehouseCore
import Testing

/// Replays in Core: the stored facts read back as written (and garbage reads as nothing, never a
/// crash), a replay with the live policy changes nothing, a stricter one moves decisions and the
/// report counts them against the labels.
@Suite struct ReplayCoreTests {
    let appID = AppID(UUID())
    let deviceID = DeviceID(bytes: Array(repeating: 7, count: 16))
    let at = Date(timeIntervalSince1970: 1_800_000_600.25)

    static let attested = HardwareFacts(app: "", securityLevel: .strongBox, verifiedBoot: true, deviceLocked: false, osPatchLevel: 202_405)

    static let factsCases: [DecisionFacts] = [
        DecisionFacts(tokenAge: nil, device: nil, velocity: nil, hardwareRequired: false),
        DecisionFacts(tokenAge: 12.345, device: nil, velocity: nil, hardwareRequired: true),
        DecisionFacts(
            tokenAge: -0.5,
            device: .init(
                firstSeen: Date(timeIntervalSince1970: 1_800_000_000.123),
                lastSeen: Date(timeIntervalSince1970: 1_800_000_500.5),
                mode: CollectionMode(rawValue: 7),
                platform: .android,
                environment: [.vpn, .proxy],
                startedFrom: "2001:db8::1",
                hardware: .attested(attested, at: Date(timeIntervalSince1970: 1_800_000_100))
            ),
            velocity: Velocity(deviceEventsLastMinute: 3, deviceAccountsLastDay: 1, accountDevicesLastDay: 2, ipDevicesLastHour: 1),
            hardwareRequired: false
        ),
        DecisionFacts(
            tokenAge: 1,
            device: .init(
                firstSeen: Date(timeIntervalSince1970: 0),
                lastSeen: Date(timeIntervalSince1970: 0),
                mode: CollectionMode(rawValue: 0),
                platform: nil,
                environment: [],
                startedFrom: nil,
                hardware: .failed(at: Date(timeIntervalSince1970: 1_800_000_000))
            ),
            velocity: Velocity(deviceEventsLastMinute: 0, deviceAccountsLastDay: 0, accountDevicesLastDay: 0, ipDevicesLastHour: 0),
            hardwareRequired: false
        ),
        DecisionFacts(
            tokenAge: 2,
            device: {
                var device = DecisionFacts.DeviceSnapshot(
                    firstSeen: Date(timeIntervalSince1970: 1_800_000_000),
                    lastSeen: Date(timeIntervalSince1970: 1_800_000_050),
                    mode: CollectionMode(rawValue: 7),
                    platform: .android,
                    environment: [],
                    startedFrom: "203.0.113.9",
                    hardware: .none
                )
                device.integrity = PlayIntegrityState(facts: integrityFacts, at: Date(timeIntervalSince1970: 1_800_000_040))
                return device
            }(),
            velocity: {
                var velocity = Velocity(deviceEventsLastMinute: 1, deviceAccountsLastDay: 1, accountDevicesLastDay: 1, ipDevicesLastHour: 1)
                velocity.attestations = AttestationCounts(addressLastHour: 4, networkLastHour: 31, accountLastDay: 2)
                return velocity
            }(),
            hardwareRequired: true
        ),
    ]

    static let integrityFacts = PlayIntegrityFacts(
        integrity: .device,
        appRecognition: "PLAY_RECOGNIZED",
        licensing: "UNLICENSED",
        deviceActivityLevel: "LEVEL_4",
        appsDetected: ["KNOWN_INSTALLED", "UNKNOWN_CAPTURING"],
        playProtect: "MEDIUM_RISK",
        versionCode: 42,
        refusal: .unlicensed
    )

    @Test(arguments: factsCases)
    func factsReadBackAsWritten(facts: DecisionFacts) {
        let bytes = facts.encoded()
        #expect(DecisionFacts(decoding: bytes) == facts)
        #expect(bytes.count <= (facts.device?.integrity == nil ? 64 : 160), "\(bytes.count) bytes")
        // Every shorter prefix is refused, not misread.
        for length in 0..<bytes.count { #expect(DecisionFacts(decoding: Array(bytes.prefix(length))) == nil) }
        #expect(DecisionFacts(decoding: bytes + [0]) == nil)
        #expect(DecisionFacts(decoding: [DecisionFacts.format + 1] + bytes.dropFirst()) == nil, "another format")
    }

    /// Format 1 (before Play Integrity and the farm counts) still reads: the same bytes less the
    /// integrity byte after the device and the three farm counts after the velocity counts.
    @Test func theFirstFormatStillReads() throws {
        let facts = Self.factsCases[2]
        var bytes = facts.encoded()
        #expect(bytes.suffix(3) == [0, 0, 0])
        bytes.removeLast(3)
        let deviceEnd = bytes.count - 4
        #expect(bytes[deviceEnd - 1] == 0, "no verdict on the device")
        bytes.remove(at: deviceEnd - 1)
        bytes[0] = 1
        #expect(DecisionFacts(decoding: bytes) == facts)
    }

    @Test func randomAndMutatedBytesNeverCrash() {
        var generator = SystemRandomNumberGenerator()
        let seeds = Self.factsCases.map { $0.encoded() }
        for round in 0..<5_000 {
            var bytes: [UInt8]
            if round.isMultiple(of: 2) {
                bytes = (0..<Int.random(in: 0...80, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
            } else {
                bytes = seeds[round % seeds.count]
                for _ in 0...Int.random(in: 0...3, using: &generator) where !bytes.isEmpty {
                    bytes[Int.random(in: 0..<bytes.count, using: &generator)] = UInt8.random(in: 0...255, using: &generator)
                }
            }
            if let decoded = DecisionFacts(decoding: bytes) { _ = decoded.encoded() }
        }
    }

    func stored(_ facts: DecisionFacts, decision: RiskDecision, score: Int, label: DecisionLabel.Verdict?) throws -> StoredDecision {
        let judged = JudgedQuery(
            appID: appID,
            eventID: try EventID(validating: 3301),
            accountID: try AccountID(validating: "a1"),
            deviceID: deviceID,
            clientAddress: IPAddress("203.0.113.9")!,
            userAgent: "shop/1.0",
            at: at,
            state: .fresh,
            facts: facts
        )
        return StoredDecision(id: UUID(), decidedAt: at, decision: decision, score: score, label: label, judged: judged)
    }

    @Test func aStricterPolicyMovesDecisionsAndIsMeasuredAgainstTheLabels() throws {
        var busy = Self.factsCases[2]
        busy.device?.environment = [.vpn]
        busy.device?.hardware = .none
        let quiet = Self.factsCases[1]
        let live = PolicyDocument.empty.policy(events: [3301], attesters: [], version: 1)
        // The live verdicts, as the decisions were stored.
        let judgedBusy = try stored(busy, decision: .pass, score: 0, label: nil).judged!
        let verdictBusy = RiskEngine.verdict(judgedBusy, policy: live, thresholds: live.effectiveRules(for: judgedBusy.eventID))
        let judgedQuiet = try stored(quiet, decision: .pass, score: 0, label: nil).judged!
        let verdictQuiet = RiskEngine.verdict(judgedQuiet, policy: live, thresholds: live.effectiveRules(for: judgedQuiet.eventID))
        let page = [
            try stored(busy, decision: verdictBusy.decision, score: verdictBusy.score, label: .fraud),
            try stored(quiet, decision: verdictQuiet.decision, score: verdictQuiet.score, label: .legitimate),
            StoredDecision(id: UUID(), decidedAt: at, decision: .pass, score: 0, label: nil, judged: nil),
        ]
        var same = ReplayReport()
        #expect(RiskEngine.replay(page, policy: live, into: &same).isEmpty, "the live policy changes nothing")
        #expect(same.replayed == 2 && same.withoutFacts == 1 && same.changed == 0)

        let rule = PolicyRule(
            name: "busy-network",
            when: "device.signals.vpn && device.platform == 'android'",
            then: .decide(.reject),
            mode: .enforce,
            eventID: nil
        )
        let stricter = PolicyDocument(rules: [:], lists: [], policyRules: [rule]).policy(events: [3301], attesters: [], version: 0)
        var report = ReplayReport(rules: ["busy-network"])
        let changed = RiskEngine.replay(page, policy: stricter, into: &report)
        #expect(report.rules["busy-network"]?.hits == 1 && report.rules["busy-network"]?.fraudHits == 1)
        let before = try #require(RiskDecision.allCases.firstIndex(of: verdictBusy.decision))
        #expect(verdictBusy.decision != .reject && report.matrix[before][2] == 1, "the live policy did not reject it; this one does")
        #expect(report.fraud == 1 && report.legitimate == 1 && report.recallAfter == 1 && report.precisionAfter == 1)
        #expect(changed.count == report.changed && changed.allSatisfy { $0.after == .reject })
    }
}
