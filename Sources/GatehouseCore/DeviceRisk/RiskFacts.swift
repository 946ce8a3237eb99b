import Foundation

/// What the store found for a risk query, in one transaction with the token's consumption.
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
    public let listEntries: [RiskListEntry]
    public let appRules: RiskRules?
    public let eventRules: RiskRules?
    /// The app has an active attester that requires a hardware-attested device.
    public let hardwareRequired: Bool
    /// The query's event is one the app registered (a device can mint a token for any event id).
    public let eventRegistered: Bool

    public init(
        consumption: Consumption?,
        device: Device?,
        velocity: Velocity?,
        listEntries: [RiskListEntry],
        appRules: RiskRules?,
        eventRules: RiskRules?,
        hardwareRequired: Bool = false,
        eventRegistered: Bool = true
    ) {
        self.hardwareRequired = hardwareRequired
        self.eventRegistered = eventRegistered
        self.consumption = consumption
        self.device = device
        self.velocity = velocity
        self.listEntries = listEntries
        self.appRules = appRules
        self.eventRules = eventRules
    }
}
