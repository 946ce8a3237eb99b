import Foundation

/// A shadow policy's outcome for one query: stored beside the live one, never answered.
public struct ShadowOutcome: Equatable, Sendable {
    public let decision: RiskDecision
    public let score: Int

    public init(decision: RiskDecision, score: Int) {
        self.decision = decision
        self.score = score
    }

    /// As stored: `review 45`.
    public var text: String { "\(decision.rawValue) \(score)" }

    public init?(text: String) {
        let parts = text.split(separator: " ")
        guard parts.count == 2, let decision = RiskDecision(rawValue: String(parts[0])), let score = Int(parts[1]), (0...100).contains(score)
        else { return nil }
        self.init(decision: decision, score: score)
    }
}

/// A stored decision: the inputs (never a secret), the verdict, when.
public struct RiskDecisionRecord: Equatable, Sendable {
    public let id: UUID
    public let appID: AppID
    public let eventID: EventID
    public let accountID: AccountID
    public let deviceID: DeviceID?
    public let tokenID: String?
    public let tokenState: ZTokenState
    public let clientAddress: String?
    public let userAgent: String?
    public let pageURL: String?
    public let verdict: RiskVerdict
    public let decidedAt: Date
    /// What the decision turned out to be, once someone said (the last label given).
    public var label: DecisionLabel?
    /// What it was judged on, for a replay; nil for a decision stored before facts were (or unreadable).
    public var facts: DecisionFacts?
    /// The policy version that judged it (0: before the app's first published version).
    public var policyVersion = 0
    /// What the shadow policy decided, when one ran beside the live one.
    public var shadow: ShadowOutcome?

    public init(
        id: UUID,
        appID: AppID,
        eventID: EventID,
        accountID: AccountID,
        deviceID: DeviceID?,
        tokenID: String?,
        tokenState: ZTokenState,
        clientAddress: String?,
        userAgent: String?,
        pageURL: String?,
        verdict: RiskVerdict,
        decidedAt: Date
    ) {
        self.id = id
        self.appID = appID
        self.eventID = eventID
        self.accountID = accountID
        self.deviceID = deviceID
        self.tokenID = tokenID
        self.tokenState = tokenState
        self.clientAddress = clientAddress
        self.userAgent = userAgent
        self.pageURL = pageURL
        self.verdict = verdict
        self.decidedAt = decidedAt
    }
}
