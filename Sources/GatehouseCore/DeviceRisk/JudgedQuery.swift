import Foundation

/// One risk query as the judge sees it, live or replayed: its own fields, the token's final state,
/// and what was read for it. A live query builds it from the request and the store's reads; a replay
/// from the stored decision and its `DecisionFacts`; `RiskEngine.verdict` judges both the same way.
public struct JudgedQuery: Sendable {
    public let appID: AppID
    public let eventID: EventID
    public let accountID: AccountID
    /// The device the token names (known or not).
    public let deviceID: DeviceID?
    public let clientAddress: IPAddress
    public let userAgent: String?
    public let at: Date
    public let state: ZTokenState
    public let facts: DecisionFacts
    /// The device as read (from `facts.device`), nil when unknown.
    public let device: Device?

    public init(
        appID: AppID,
        eventID: EventID,
        accountID: AccountID,
        deviceID: DeviceID?,
        clientAddress: IPAddress,
        userAgent: String?,
        at: Date,
        state: ZTokenState,
        facts: DecisionFacts
    ) {
        self.appID = appID
        self.eventID = eventID
        self.accountID = accountID
        self.deviceID = deviceID
        self.clientAddress = clientAddress
        self.userAgent = userAgent
        self.at = at
        self.state = state
        self.facts = facts
        self.device = deviceID.flatMap { id in facts.device.map { $0.device(appID: appID, id: id) } }
    }

    /// A live query with what the store read for it.
    public init(_ query: RiskQuery, state: ZTokenState, device: Device?, velocity: Velocity?, hardwareRequired: Bool) {
        appID = query.appID
        eventID = query.eventID
        accountID = query.accountID
        deviceID = device?.id ?? query.claims?.deviceID
        clientAddress = query.clientAddress
        userAgent = query.userAgent
        at = query.at
        self.state = state
        facts = DecisionFacts(
            tokenAge: query.claims.map { query.at.timeIntervalSince($0.issuedAt) },
            device: device.map(DecisionFacts.DeviceSnapshot.init),
            velocity: velocity,
            hardwareRequired: hardwareRequired
        )
        self.device = device
    }
}
