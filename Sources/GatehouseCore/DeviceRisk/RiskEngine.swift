import Foundation

public enum RiskDecision: String, Sendable, Codable, CaseIterable { case pass, review, reject }

/// How busy a device, an account and an address have been, counted from the ztokens risk queries consumed.
public struct Velocity: Equatable, Sendable {
    public var deviceEventsLastMinute: Int
    public var deviceAccountsLastDay: Int
    public var accountDevicesLastDay: Int
    public var ipDevicesLastHour: Int
    /// The farm signal's counts (`AttestationFarm`).
    public var attestations: AttestationCounts = .none

    public init(deviceEventsLastMinute: Int, deviceAccountsLastDay: Int, accountDevicesLastDay: Int, ipDevicesLastHour: Int) {
        self.deviceEventsLastMinute = deviceEventsLastMinute
        self.deviceAccountsLastDay = deviceAccountsLastDay
        self.accountDevicesLastDay = accountDevicesLastDay
        self.ipDevicesLastHour = ipDevicesLastHour
    }
}

/// One reason in a decision, with the sentence that explains it.
public struct TagHit: Equatable, Sendable, Codable {
    public let tag: String
    public let reason: String
    public let weight: Int

    public init(tag: String, reason: String, weight: Int) {
        self.tag = tag
        self.reason = reason
        self.weight = weight
    }
}

/// Everything a decision is made from; gathered by the caller, judged here without I/O.
public struct RiskInputs: Sendable {
    public var tokenState: ZTokenState
    public var device: Device?
    public var velocity: Velocity?
    /// The address the device started from, which `network.ip_changed` compares with the query's.
    public var startedFrom: String?
    public var clientAddress: String?
    public var listHits: [RiskListEntry]
    /// The app has an active attester that requires hardware: a device without it is tagged.
    public var hardwareRequired: Bool

    public init(
        tokenState: ZTokenState,
        device: Device?,
        velocity: Velocity?,
        startedFrom: String?,
        clientAddress: String?,
        listHits: [RiskListEntry],
        hardwareRequired: Bool = false
    ) {
        self.hardwareRequired = hardwareRequired
        self.tokenState = tokenState
        self.device = device
        self.velocity = velocity
        self.startedFrom = startedFrom
        self.clientAddress = clientAddress
        self.listHits = listHits
    }
}

public struct RiskVerdict: Equatable, Sendable {
    public let decision: RiskDecision
    public let score: Int
    public let tags: [TagHit]
    /// What the policy's rules did: those that matched (applied, or monitored) and those that failed.
    public var rules: [RuleOutcome]

    public init(decision: RiskDecision, score: Int, tags: [TagHit], rules: [RuleOutcome] = []) {
        self.decision = decision
        self.score = score
        self.tags = tags
        self.rules = rules
    }
}

/// The scoring, documented in docs/risk.md. Deterministic: the same inputs and rules give the same
/// verdict, and tags come out sorted by name.
public enum RiskEngine {
    /// What a token tag's reason says, in words an operator reads in the decisions explorer.
    static func reason(for state: ZTokenState) -> String {
        switch state {
        case .fresh: "The ztoken is fresh."
        case .replayed: "The ztoken was already presented in an earlier query."
        case .expired: "The ztoken expired before this query."
        case .forged: "The ztoken was not minted with a key this service handed out (its MAC does not verify)."
        case .wrongApp: "The ztoken names another app."
        case .wrongEvent: "The ztoken was minted for another event, or for one this app does not have."
        case .wrongAccount: "The ztoken was issued for another account."
        }
    }

    public static func judge(_ inputs: RiskInputs, rules: EffectiveRiskRules) -> RiskVerdict {
        var hits: [(RiskTag, String)] = []
        if let tokenTag = tokenTag(inputs.tokenState) {
            hits.append((tokenTag, reason(for: inputs.tokenState)))
        }
        if inputs.tokenState == .fresh || inputs.tokenState == .replayed {
            if let device = inputs.device {
                hits += deviceHits(device, hardwareRequired: inputs.hardwareRequired)
            } else {
                hits.append((.deviceUnknown, "The ztoken's device has no stored device start."))
            }
        }
        if let velocity = inputs.velocity { hits += velocityHits(velocity, rules: rules) }
        if let started = inputs.startedFrom.flatMap(IPAddress.init), let client = inputs.clientAddress.flatMap(IPAddress.init), started != client {
            hits.append((.ipChanged, "The device started from \(started) and the ztoken is used from \(client)."))
        }
        for entry in inputs.listHits {
            let tag: RiskTag =
                switch entry.kind {
                case .deny: .denyListed
                case .allow: .allowListed
                case .challenge: .challengeListed
                }
            hits.append((tag, "\(entry.subject.rawValue) \(entry.value) is on the \(entry.kind.rawValue) list."))
        }

        var tags = hits.map { TagHit(tag: $0.0.rawValue, reason: $0.1, weight: $0.0.forcesReject ? 100 : rules.weights[$0.0] ?? 0) }
        tags.sort { ($0.tag, $0.reason) < ($1.tag, $1.reason) }
        return outcome(tags: tags, kinds: Set(hits.map(\.0)), decided: nil, thresholds: rules)
    }

    /// What the SDK reported, overruled by what the hardware proved: a verified key in real hardware
    /// is no simulator, and an unverified boot or an unlocked bootloader is a rooted device whatever
    /// the SDK said.
    static func deviceHits(_ device: Device, hardwareRequired: Bool) -> [(RiskTag, String)] {
        var reported = device.environment
        var hits: [(RiskTag, String)] = []
        switch device.hardware {
        case .attested(let facts, let time):
            if facts.securityLevel != .software {
                reported.remove(.simulator)
                hits.append(
                    (.attestationHardware, "The device's key is held in its \(facts.securityLevel.rawValue), attested at \(time.ISO8601Format()).")
                )
            } else if hardwareRequired {
                hits.append((.attestationMissing, "The device's attested key is a software key, not hardware."))
            }
            if facts.verifiedBoot == false || facts.deviceLocked == false {
                reported.remove(.jailbreak)
                hits.append((.deviceJailbreak, "The hardware attestation says the device's boot is not verified or its bootloader is unlocked."))
            }
        case .failed(let time):
            hits.append((.attestationFailed, "The device's last hardware attestation, at \(time.ISO8601Format()), was refused."))
        case .none:
            if hardwareRequired, device.integrity == nil {
                hits.append((.attestationMissing, "The app requires hardware attestation and this device has none."))
            }
        }
        if let integrity = device.integrity { hits += PlayIntegrityTags.hits(integrity.facts, at: integrity.at) }
        let signals: [(EnvironmentSignals, RiskTag)] = [
            (.simulator, .deviceSimulator), (.jailbreak, .deviceJailbreak), (.debugger, .deviceDebugger),
            (.hooking, .deviceHooking), (.proxy, .deviceProxy), (.vpn, .deviceVPN),
        ]
        for (signal, tag) in signals where reported.contains(signal) {
            hits.append((tag, "The SDK reported \(tag.rawValue.dropFirst("device.".count)) at device start."))
        }
        return hits
    }

    /// Each velocity count over its limit, as a tag with its sentence.
    static func velocityHits(_ velocity: Velocity, rules: EffectiveRiskRules) -> [(RiskTag, String)] {
        let checks: [(Int, Int, RiskTag, String)] = [
            (
                velocity.deviceEventsLastMinute, rules.maxDeviceEventsPerMinute, .deviceEventsPerMinute,
                "events from this device in the last minute"
            ),
            (velocity.deviceAccountsLastDay, rules.maxDeviceAccountsPerDay, .deviceAccountsPerDay, "accounts on this device in the last day"),
            (velocity.accountDevicesLastDay, rules.maxAccountDevicesPerDay, .accountDevicesPerDay, "devices for this account in the last day"),
            (velocity.ipDevicesLastHour, rules.maxIPDevicesPerHour, .ipDevicesPerHour, "devices from this IP in the last hour"),
        ]
        // The store counts each up to its limit + 1 (the cost of counting stays flat under an attack),
        // so past the limit the sentence says "more than".
        return checks.filter { $0.0 > $0.1 }.map { _, limit, tag, what in (tag, "More than \(limit) \(what) (limit \(limit)).") }
            + AttestationFarm.hits(velocity.attestations, rules: rules)
    }

    static func tokenTag(_ state: ZTokenState) -> RiskTag? {
        switch state {
        case .fresh: nil
        case .replayed: .tokenReplayed
        case .expired: .tokenExpired
        case .forged: .tokenForged
        case .wrongApp: .tokenWrongApp
        case .wrongEvent: .tokenWrongEvent
        case .wrongAccount: .tokenWrongAccount
        }
    }
}

extension RiskEngine {
    /// The decision for a query from what the store found: the token's final state (a fresh token an
    /// earlier query consumed is a replay; one for an event the app does not have is the wrong event),
    /// the list entries it hits, the app's and the event's rules merged, then the scoring.
    public static func decide(_ query: RiskQuery, facts: RiskFacts, id: UUID) -> RiskDecisionRecord {
        var state = query.tokenState
        var pageURL: String?
        switch facts.consumption {
        case .consumed(let url): pageURL = url
        case .alreadyConsumed: state = .replayed
        case nil: break
        }
        if state == .fresh && !facts.isRegistered(query.eventID) { state = .wrongEvent }
        let judged = JudgedQuery(query, state: state, device: facts.device, velocity: facts.velocity, hardwareRequired: facts.policy.hardwareRequired)
        var record = RiskDecisionRecord(
            id: id,
            appID: query.appID,
            eventID: query.eventID,
            accountID: query.accountID,
            deviceID: query.claims?.deviceID,
            tokenID: query.claims?.tokenID,
            tokenState: state,
            clientAddress: query.clientAddress.description,
            userAgent: query.userAgent,
            pageURL: pageURL,
            verdict: verdict(judged, policy: facts.policy, thresholds: facts.rules),
            decidedAt: query.at
        )
        record.facts = judged.facts
        record.policyVersion = facts.policy.version
        if let shadow = facts.policy.shadow {
            let verdict = verdict(judged, policy: shadow.policy, thresholds: shadow.policy.effectiveRules(for: query.eventID))
            record.shadow = ShadowOutcome(decision: verdict.decision, score: verdict.score)
        }
        return record
    }

    /// The built-in verdict, then the policy's rules over it (none, most often: nothing to evaluate).
    /// `thresholds` is `policy.effectiveRules(for:)` of the query's event, worked out by the caller.
    public static func verdict(_ judged: JudgedQuery, policy: RiskPolicy, thresholds: EffectiveRiskRules) -> RiskVerdict {
        let hits = policy.listEntries.filter { $0.matches(device: judged.deviceID, account: judged.accountID, address: judged.clientAddress) }
        let inputs = RiskInputs(
            tokenState: judged.state,
            device: judged.device,
            velocity: judged.facts.velocity,
            startedFrom: judged.device?.lastAddress,
            clientAddress: judged.clientAddress.description,
            listHits: hits,
            hardwareRequired: judged.facts.hardwareRequired
        )
        let builtIn = judge(inputs, rules: thresholds)
        let rules = policy.policyRules(for: judged.eventID)
        guard !rules.isEmpty else { return builtIn }
        let values = RuleFacts.values(judged, listHits: hits, verdict: builtIn)
        return apply(rules, to: builtIn, facts: values, thresholds: thresholds)
    }
}
