import Crypto
import Foundation

/// What a solved captcha earns: a single-use pass token, valid for 300 s, that the app's backend
/// redeems through siteverify (or an attester or a secondary verification redeems). Only its
/// SHA-256 is stored.
public struct CaptchaPass: Sendable, Equatable {
    public static let lifetimeSeconds = 300.0
    static let prefix = "gcp_"

    public let tokenHash: String
    public let appID: AppID
    public let challenge: CaptchaChallenge
    public let solvedAt: Date
    public let expiresAt: Date
    public var redemption: PassRedemption?
    public var redeemedAt: Date?

    public init(
        tokenHash: String,
        appID: AppID,
        challenge: CaptchaChallenge,
        solvedAt: Date,
        expiresAt: Date,
        redemption: PassRedemption?,
        redeemedAt: Date?
    ) {
        self.tokenHash = tokenHash
        self.appID = appID
        self.challenge = challenge
        self.solvedAt = solvedAt
        self.expiresAt = expiresAt
        self.redemption = redemption
        self.redeemedAt = redeemedAt
    }

    /// A new pass for a challenge just solved, and the token (returned to the page once).
    public static func issue<R: RandomNumberGenerator>(
        for challenge: CaptchaChallenge,
        at now: Date,
        using generator: inout R
    ) -> (
        token: String, pass: CaptchaPass
    ) {
        let token = prefix + RandomText.make(length: 43, alphabet: RandomText.base62, using: &generator)
        let pass = CaptchaPass(
            tokenHash: hash(token),
            appID: challenge.appID,
            challenge: challenge,
            solvedAt: now,
            expiresAt: now.addingTimeInterval(lifetimeSeconds),
            redemption: nil,
            redeemedAt: nil
        )
        return (token, pass)
    }

    /// The stored form of a token, or nil when the text cannot be a pass token at all.
    public static func storedHash(of token: String) -> String? {
        guard token.utf8.count == prefix.utf8.count + 43, token.hasPrefix(prefix),
            token.dropFirst(prefix.count).allSatisfy(RandomText.base62.contains)
        else { return nil }
        return hash(token)
    }

    private static func hash(_ token: String) -> String {
        Hex.encode(Array(SHA256.hash(data: Array(token.utf8))))
    }
}

/// Who redeemed a pass: the app's backend through siteverify (with its idempotency key, if any),
/// an attester exchanging it for an attestation token, or a secondary verification.
public enum PassRedemption: Sendable, Equatable {
    case siteverify(idempotencyKey: String?)
    case attester(AttestID)
    case secondaryVerification

    public var storedValue: String {
        switch self {
        case .siteverify(let key): key.map { "siteverify:\($0)" } ?? "siteverify"
        case .attester(let id): "attester:\(id)"
        case .secondaryVerification: "secondary"
        }
    }

    public init?(storedValue: String) {
        switch storedValue {
        case "siteverify": self = .siteverify(idempotencyKey: nil)
        case "secondary": self = .secondaryVerification
        case let text where text.hasPrefix("siteverify:"): self = .siteverify(idempotencyKey: String(text.dropFirst("siteverify:".count)))
        case let text where text.hasPrefix("attester:"):
            guard let id = try? AttestID(validating: String(text.dropFirst("attester:".count))) else { return nil }
            self = .attester(id)
        default: return nil
        }
    }
}

/// The outcome of redeeming a pass token, from what the store saw.
public enum PassRedemptionOutcome: Sendable, Equatable {
    /// Redeemed now, or an idempotent retry of the same siteverify.
    case valid(CaptchaPass)
    /// No such token for this app.
    case unknown
    /// Expired, or already redeemed by someone else.
    case spent

    /// - Parameters:
    ///   - pass: the row after the conditional update, or as it stands when the update matched nothing.
    ///   - redeemedNow: whether this call's conditional update redeemed it.
    public static func classify(_ pass: CaptchaPass?, redeemedNow: Bool, as redemption: PassRedemption) -> PassRedemptionOutcome {
        guard let pass else { return .unknown }
        if redeemedNow { return .valid(pass) }
        if case .siteverify(let key?) = redemption, pass.redemption == redemption, key.isEmpty == false { return .valid(pass) }
        return .spent
    }
}
