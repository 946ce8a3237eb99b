import Crypto
import Foundation

/// One risk query from the app's backend, checked without I/O: its values parsed, and the ztoken's own
/// verdict (MAC, app, event, account, expiry), which says what the store must consume and read.
public struct RiskQuery: Sendable {
    public let appID: AppID
    public let eventID: EventID
    public let accountID: AccountID
    public let clientAddress: IPAddress
    public let userAgent: String?
    /// The token's state before any lookup; `.fresh` still has to be consumed atomically.
    public let tokenState: ZTokenState
    public let claims: ZTokenClaims?
    public let at: Date

    /// The token to consume; nil when it was refused before any lookup (forged, wrong app...).
    public var tokenID: String? { tokenState == .fresh ? claims?.tokenID : nil }
    /// The device to read signals and velocity for; nil when the token names none we trust.
    public var deviceID: DeviceID? { tokenState == .fresh ? claims?.deviceID : nil }

    /// Anything up to 512 characters gets a decision (a malformed token is `forged`); longer is no token.
    public init(
        ztoken: String,
        eventID: Int,
        accountID: String,
        clientIP: String,
        userAgent: String?,
        app: AppID,
        ztokenTTL: Int,
        keys: ServerKeys,
        at now: Date
    ) throws(DomainError) {
        let event = try EventID(validating: eventID)
        let account = try AccountID(validating: accountID)
        guard let address = IPAddress(clientIP) else {
            throw DomainError(.invalidIPAddress, "clientIp is an IPv4 or IPv6 address.", field: "clientIp")
        }
        if let agent = userAgent, agent.unicodeScalars.count > 512 || agent.hasControlCharacters {
            throw DomainError(.invalidDeviceData, "userAgent is at most 512 characters without control characters.", field: "userAgent")
        }
        guard (1...512).contains(ztoken.unicodeScalars.count) else {
            throw DomainError(.invalidZToken, "ztoken is 1 to 512 characters.", field: "ztoken")
        }
        (tokenState, claims) = ZToken.check(ztoken, app: app, event: event, account: account, maxTTL: ztokenTTL, at: now, keys: keys)
        self.appID = app
        self.eventID = event
        self.accountID = account
        self.clientAddress = address
        self.userAgent = userAgent
        self.at = now
    }

    /// A query from values already parsed and a token already checked.
    public init(
        appID: AppID,
        eventID: EventID,
        accountID: AccountID,
        clientAddress: IPAddress,
        tokenState: ZTokenState,
        claims: ZTokenClaims?,
        at: Date
    ) {
        (self.appID, self.eventID, self.accountID, self.clientAddress) = (appID, eventID, accountID, clientAddress)
        (self.userAgent, self.tokenState, self.claims, self.at) = (nil, tokenState, claims, at)
    }
}

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
        if state == .fresh && !facts.eventRegistered { state = .wrongEvent }
        let device = facts.device?.id ?? query.claims?.deviceID
        let hits = facts.listEntries.filter { $0.matches(device: device, account: query.accountID, address: query.clientAddress) }
        let inputs = RiskInputs(
            tokenState: state,
            device: facts.device,
            velocity: facts.velocity,
            startedFrom: facts.device?.lastAddress,
            clientAddress: query.clientAddress.description,
            listHits: hits,
            hardwareRequired: facts.hardwareRequired
        )
        return RiskDecisionRecord(
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
            verdict: judge(inputs, rules: RiskRules.effective(app: facts.appRules, event: facts.eventRules)),
            decidedAt: query.at
        )
    }
}
