/// Every reason a decision can give. The raw values are stable API: backends match on them.
public enum RiskTag: String, Sendable, CaseIterable, Codable, Comparable {
    case tokenReplayed = "token.replayed"
    case tokenExpired = "token.expired"
    case tokenForged = "token.forged"
    case tokenWrongApp = "token.wrong_app"
    case tokenWrongEvent = "token.wrong_event"
    case tokenWrongAccount = "token.wrong_account"
    case deviceUnknown = "device.unknown"
    case deviceSimulator = "device.simulator"
    case deviceJailbreak = "device.jailbreak"
    case deviceDebugger = "device.debugger"
    case deviceHooking = "device.hooking"
    case deviceProxy = "device.proxy"
    case deviceVPN = "device.vpn"
    case deviceEventsPerMinute = "velocity.device_events_per_minute"
    case deviceAccountsPerDay = "velocity.device_accounts_per_day"
    case accountDevicesPerDay = "velocity.account_devices_per_day"
    case ipDevicesPerHour = "velocity.ip_devices_per_hour"
    case ipChanged = "network.ip_changed"
    case denyListed = "list.deny"
    case allowListed = "list.allow"
    case challengeListed = "list.challenge"
    case attestationHardware = "attestation.hardware"
    case attestationFailed = "attestation.failed"
    case attestationMissing = "attestation.missing"
    case attestationPlayIntegrity = "attestation.play_integrity"
    case attestationFarm = "attestation.farm"
    case deviceIntegrityFailed = "device.integrity_failed"
    case deviceActivityHigh = "device.activity_high"
    case appUnrecognized = "app.unrecognized"
    case appUnlicensed = "app.unlicensed"
    case environmentRiskyApps = "environment.risky_apps"
    case environmentPlayProtectRisk = "environment.play_protect_risk"

    public static func < (lhs: RiskTag, rhs: RiskTag) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Tags that decide on their own, whatever the score: a bad token or a deny-list hit rejects.
    public var forcesReject: Bool {
        switch self {
        case .tokenReplayed, .tokenExpired, .tokenForged, .tokenWrongApp, .tokenWrongEvent, .tokenWrongAccount, .denyListed: true
        default: false
        }
    }

    /// Tags that add to the score; list hits decide by themselves instead.
    public var isWeighted: Bool { !forcesReject && self != .allowListed && self != .challengeListed }

    /// Weights that make sense when an operator has set nothing.
    static let defaultWeights: [RiskTag: Int] = [
        .deviceUnknown: 20, .deviceSimulator: 40, .deviceJailbreak: 40, .deviceDebugger: 30, .deviceHooking: 60, .deviceProxy: 15,
        .deviceVPN: 10, .deviceEventsPerMinute: 40, .deviceAccountsPerDay: 35, .accountDevicesPerDay: 30, .ipDevicesPerHour: 30,
        .ipChanged: 10, .attestationHardware: 0, .attestationFailed: 50, .attestationMissing: 30, .attestationPlayIntegrity: 0,
        .attestationFarm: 40, .deviceIntegrityFailed: 50, .deviceActivityHigh: 30, .appUnrecognized: 40, .appUnlicensed: 30,
        .environmentRiskyApps: 40, .environmentPlayProtectRisk: 30,
    ]
}

/// An app's (or one event's) thresholds, weights and cutoffs. Every field is optional: what is not set
/// falls through event -> app -> defaults.
public struct RiskRules: Equatable, Sendable, Codable {
    public var reviewAt: Int?
    public var rejectAt: Int?
    public var maxDeviceEventsPerMinute: Int?
    public var maxDeviceAccountsPerDay: Int?
    public var maxAccountDevicesPerDay: Int?
    public var maxIPDevicesPerHour: Int?
    /// The farm signal's thresholds: attestations one address or network shows in an hour, newly
    /// attested devices one account shows in a day (`attestation.farm` past any).
    public var maxAddressAttestationsPerHour: Int?
    public var maxNetworkAttestationsPerHour: Int?
    public var maxAccountAttestationsPerDay: Int?
    /// Score added per tag, by the tag's raw value; 0 to 100.
    public var weights: [String: Int]?

    public init(
        reviewAt: Int? = nil,
        rejectAt: Int? = nil,
        maxDeviceEventsPerMinute: Int? = nil,
        maxDeviceAccountsPerDay: Int? = nil,
        maxAccountDevicesPerDay: Int? = nil,
        maxIPDevicesPerHour: Int? = nil,
        maxAddressAttestationsPerHour: Int? = nil,
        maxNetworkAttestationsPerHour: Int? = nil,
        maxAccountAttestationsPerDay: Int? = nil,
        weights: [String: Int]? = nil
    ) {
        self.maxAddressAttestationsPerHour = maxAddressAttestationsPerHour
        self.maxNetworkAttestationsPerHour = maxNetworkAttestationsPerHour
        self.maxAccountAttestationsPerDay = maxAccountAttestationsPerDay
        self.reviewAt = reviewAt
        self.rejectAt = rejectAt
        self.maxDeviceEventsPerMinute = maxDeviceEventsPerMinute
        self.maxDeviceAccountsPerDay = maxDeviceAccountsPerDay
        self.maxAccountDevicesPerDay = maxAccountDevicesPerDay
        self.maxIPDevicesPerHour = maxIPDevicesPerHour
        self.weights = weights
    }

    public static let defaults = EffectiveRiskRules(
        reviewAt: 40,
        rejectAt: 70,
        maxDeviceEventsPerMinute: 10,
        maxDeviceAccountsPerDay: 3,
        maxAccountDevicesPerDay: 3,
        maxIPDevicesPerHour: 20,
        maxAddressAttestationsPerHour: 10,
        maxNetworkAttestationsPerHour: 30,
        maxAccountAttestationsPerDay: 3,
        weights: RiskTag.defaultWeights
    )

    /// Refuses what cannot be meant: cutoffs outside 1...100 or review above reject, limits under 1,
    /// weights outside 0...100 or for tags that do not exist or that decide on their own.
    public func validated() throws(DomainError) -> RiskRules {
        for (name, value) in [("reviewAt", reviewAt), ("rejectAt", rejectAt)] {
            if let value, !(1...100).contains(value) {
                throw DomainError(.invalidRiskRules, "\(name) is a score from 1 to 100.", field: name)
            }
        }
        let limits = [
            ("maxDeviceEventsPerMinute", maxDeviceEventsPerMinute), ("maxDeviceAccountsPerDay", maxDeviceAccountsPerDay),
            ("maxAccountDevicesPerDay", maxAccountDevicesPerDay), ("maxIPDevicesPerHour", maxIPDevicesPerHour),
            ("maxAddressAttestationsPerHour", maxAddressAttestationsPerHour), ("maxNetworkAttestationsPerHour", maxNetworkAttestationsPerHour),
            ("maxAccountAttestationsPerDay", maxAccountAttestationsPerDay),
        ]
        for (name, value) in limits {
            if let value, !(1...1_000_000).contains(value) {
                throw DomainError(.invalidRiskRules, "\(name) is from 1 to 1000000.", field: name)
            }
        }
        for (tag, weight) in weights ?? [:] {
            guard let known = RiskTag(rawValue: tag), known.isWeighted else {
                throw DomainError(.invalidRiskRules, "'\(tag)' is not a weighted tag; see docs/risk.md.", field: "weights")
            }
            guard (0...100).contains(weight) else {
                throw DomainError(.invalidRiskRules, "The weight of \(tag) is from 0 to 100.", field: "weights")
            }
        }
        return self
    }

    /// Resolves event rules over app rules over the defaults, field by field.
    public static func effective(app: RiskRules?, event: RiskRules?) -> EffectiveRiskRules {
        let base = defaults
        func pick(_ path: KeyPath<RiskRules, Int?>, _ fallback: Int) -> Int {
            event?[keyPath: path] ?? app?[keyPath: path] ?? fallback
        }
        var weights = base.weights
        for layer in [app?.weights, event?.weights] {
            for (tag, weight) in layer ?? [:] {
                if let known = RiskTag(rawValue: tag) { weights[known] = weight }
            }
        }
        let rules = EffectiveRiskRules(
            reviewAt: pick(\.reviewAt, base.reviewAt),
            rejectAt: pick(\.rejectAt, base.rejectAt),
            maxDeviceEventsPerMinute: pick(\.maxDeviceEventsPerMinute, base.maxDeviceEventsPerMinute),
            maxDeviceAccountsPerDay: pick(\.maxDeviceAccountsPerDay, base.maxDeviceAccountsPerDay),
            maxAccountDevicesPerDay: pick(\.maxAccountDevicesPerDay, base.maxAccountDevicesPerDay),
            maxIPDevicesPerHour: pick(\.maxIPDevicesPerHour, base.maxIPDevicesPerHour),
            maxAddressAttestationsPerHour: pick(\.maxAddressAttestationsPerHour, base.maxAddressAttestationsPerHour),
            maxNetworkAttestationsPerHour: pick(\.maxNetworkAttestationsPerHour, base.maxNetworkAttestationsPerHour),
            maxAccountAttestationsPerDay: pick(\.maxAccountAttestationsPerDay, base.maxAccountAttestationsPerDay),
            weights: weights
        )
        // reviewAt at or above rejectAt is allowed: it means there is no review band.
        return rules
    }
}

/// Rules with every value resolved: what a decision is computed with.
public struct EffectiveRiskRules: Equatable, Sendable {
    public let reviewAt: Int
    public let rejectAt: Int
    public let maxDeviceEventsPerMinute: Int
    public let maxDeviceAccountsPerDay: Int
    public let maxAccountDevicesPerDay: Int
    public let maxIPDevicesPerHour: Int
    public let maxAddressAttestationsPerHour: Int
    public let maxNetworkAttestationsPerHour: Int
    public let maxAccountAttestationsPerDay: Int
    public let weights: [RiskTag: Int]
}
