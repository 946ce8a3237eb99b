import Foundation

/// An app's risk policy as the store keeps it: its rules by scope (0 for the app, else an event id),
/// its list entries, the events it registered, and whether an active attester requires hardware.
public struct RiskPolicy: Sendable {
    public let rules: [Int: RiskRules]
    public let listEntries: [RiskListEntry]
    public let events: Set<Int>
    /// The app has an active attester that requires a hardware-attested device.
    public let hardwareRequired: Bool
    /// The fraud team's rules, parsed and checked when the policy was read.
    public let compiledRules: [CompiledRule]
    /// The published version these are (0 before the app's first one).
    public let version: Int
    /// A policy judging every query beside this one, whose outcome is stored and never answered.
    public var shadow: ShadowPolicy?
    /// The rules that judge each registered event, worked out once per read of the policy, not per query.
    private let rulesByEvent: [Int: CompiledRuleSet]
    private let appRules: CompiledRuleSet
    /// The thresholds and weights in force, likewise: a forged flood's every query needs its event's.
    private let effectiveByEvent: [Int: EffectiveRiskRules]
    private let appEffective: EffectiveRiskRules

    public init(
        rules: [Int: RiskRules],
        listEntries: [RiskListEntry],
        events: Set<Int>,
        attesters: [Attester],
        compiledRules: [CompiledRule] = [],
        version: Int = 0
    ) {
        self.compiledRules = compiledRules
        self.version = version
        appRules = CompiledRuleSet(compiledRules.filter { $0.rule.eventID == nil })
        var byEvent: [Int: CompiledRuleSet] = [:]
        for event in events {
            byEvent[event] = CompiledRuleSet(compiledRules.filter { $0.rule.eventID == nil || $0.rule.eventID?.rawValue == event })
        }
        rulesByEvent = byEvent
        appEffective = RiskRules.effective(app: rules[0], event: nil)
        var effective: [Int: EffectiveRiskRules] = [:]
        for (scope, eventRules) in rules where scope != 0 {
            effective[scope] = RiskRules.effective(app: rules[0], event: eventRules)
        }
        effectiveByEvent = effective
        self.rules = rules
        self.listEntries = listEntries
        self.events = events
        self.hardwareRequired = attesters.contains { $0.status == .active && $0.requiresHardware }
    }

    /// An app with no rules, lists, events or attesters of its own.
    public static let none = RiskPolicy(rules: [:], listEntries: [], events: [], attesters: [])

    /// The policy rules that judge one event's queries: the app's and the event's own, in name order.
    public func policyRules(for event: EventID) -> CompiledRuleSet {
        rulesByEvent[event.rawValue] ?? appRules
    }

    /// The rules in force for one event: the event's own over the app's over the defaults.
    public func effectiveRules(for event: EventID) -> EffectiveRiskRules {
        effectiveByEvent[event.rawValue] ?? appEffective
    }
}

/// The policy a shadow runs (a class: a policy holds its shadow, which holds none).
public final class ShadowPolicy: Sendable {
    public let policy: RiskPolicy
    /// The version it is, when it is one unchanged.
    public let version: Int?

    public init(policy: RiskPolicy, version: Int?) {
        self.policy = policy
        self.version = version
    }
}
