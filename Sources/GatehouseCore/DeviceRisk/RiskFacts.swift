import Foundation

/// What the store found for a risk query, read before the token's consumption is written (in the same
/// batch, which commits the consumption with the decision), and the policy and rules in force, worked
/// out once (the store bounds the velocity counts by the rules).
public struct RiskFacts: Sendable {
    public enum Consumption: Sendable, Equatable {
        /// This query consumed the token (the page it was minted for, for a bridge token).
        case consumed(pageURL: String?)
        /// An earlier query consumed it.
        case alreadyConsumed
    }

    /// Nil when nothing was to be consumed (the token was refused before any lookup).
    public let consumption: Consumption?
    public let device: Device?
    public let velocity: Velocity?
    public let policy: RiskPolicy
    /// `policy.effectiveRules(for:)` of the query's event.
    public let rules: EffectiveRiskRules

    public init(consumption: Consumption?, device: Device?, velocity: Velocity?, policy: RiskPolicy, rules: EffectiveRiskRules) {
        self.consumption = consumption
        self.device = device
        self.velocity = velocity
        self.policy = policy
        self.rules = rules
    }

    /// The query's event is one the app registered (a device can mint a token for any event id).
    public func isRegistered(_ event: EventID) -> Bool { policy.events.contains(event.rawValue) }
}
