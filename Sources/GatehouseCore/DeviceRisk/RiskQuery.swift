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
