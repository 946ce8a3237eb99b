import Foundation
import GatehouseCore

/// The captcha's request limits on this instance: challenges per client address and per device,
/// answers per client address.
actor CaptchaRateLimits {
    private var limiter = RateLimiter()
    private let challenges: RateLimiter.Rule
    private let answers: RateLimiter.Rule

    init(challengesPerMinute: Int, answersPerMinute: Int) {
        challenges = .init(limit: challengesPerMinute, windowSeconds: 60)
        answers = .init(limit: answersPerMinute, windowSeconds: 60)
    }

    func admitChallenge(address: String?, device: DeviceID?, at now: Date) -> RateLimiter.Decision {
        let byAddress = limiter.admit("challenge:ip:\(address ?? "unknown")", rule: challenges, at: now)
        guard case .allowed = byAddress, let device else { return byAddress }
        return limiter.admit("challenge:device:\(device)", rule: challenges, at: now)
    }

    func admitAnswer(address: String?, at now: Date) -> RateLimiter.Decision {
        limiter.admit("answer:ip:\(address ?? "unknown")", rule: answers, at: now)
    }
}

/// A request over one of those limits: 429 with `Retry-After`.
struct CaptchaRateLimited: Error {
    let retryAfter: Int
}
