import Foundation
import GatehouseCore

/// The request limits that anonymous or app-wide-signed callers meet on this instance, per client
/// address and, where the request names one, per device: captcha challenges and answers, and
/// attestation challenges and token redemptions (each redemption may cost the server a PBKDF2 run,
/// so a client that sends no work cannot send many).
public actor RateLimits {
    enum Action: String, Sendable {
        case captchaChallenge, captchaAnswer, attestChallenge, attestToken
    }

    private var limiter = RateLimiter()
    private let rules: [Action: RateLimiter.Rule]

    public init(captchaChallengesPerMinute: Int, captchaAnswersPerMinute: Int, attestRequestsPerMinute: Int) {
        rules = [
            .captchaChallenge: .init(limit: captchaChallengesPerMinute, windowSeconds: 60),
            .captchaAnswer: .init(limit: captchaAnswersPerMinute, windowSeconds: 60),
            .attestChallenge: .init(limit: attestRequestsPerMinute, windowSeconds: 60),
            .attestToken: .init(limit: attestRequestsPerMinute, windowSeconds: 60),
        ]
    }

    /// Counts one `action` against the address and then the device; throws `RateLimited` past either.
    func admit(_ action: Action, address: String?, device: DeviceID?, at now: Date) throws(RateLimited) {
        let rule = rules[action]!
        if case .limited(let retryAfter) = limiter.admit("\(action.rawValue):ip:\(address ?? "unknown")", rule: rule, at: now) {
            throw RateLimited(retryAfter: retryAfter)
        }
        guard let device else { return }
        if case .limited(let retryAfter) = limiter.admit("\(action.rawValue):device:\(device)", rule: rule, at: now) {
            throw RateLimited(retryAfter: retryAfter)
        }
    }
}

/// A request over one of those limits: 429 with `Retry-After`.
public struct RateLimited: Error {
    public let retryAfter: Int
}
