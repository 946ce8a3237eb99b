import Foundation

/// What a device did lately, as the store counts it for an adaptive attester.
public struct RecentDeviceActivity: Equatable, Sendable {
    /// Risk decisions about the device in the last hour, by verdict.
    public var reviewsLastHour: Int
    public var rejectsLastHour: Int
    /// ztokens the device asked for in the last ten minutes.
    public var ztokensLastTenMinutes: Int
    public var denyListed: Bool

    public static let quiet = RecentDeviceActivity(reviewsLastHour: 0, rejectsLastHour: 0, ztokensLastTenMinutes: 0, denyListed: false)

    public init(reviewsLastHour: Int, rejectsLastHour: Int, ztokensLastTenMinutes: Int, denyListed: Bool) {
        self.reviewsLastHour = reviewsLastHour
        self.rejectsLastHour = rejectsLastHour
        self.ztokensLastTenMinutes = ztokensLastTenMinutes
        self.denyListed = denyListed
    }
}

/// The adaptive curve (docs/attestation.md): suspicious devices pay more work, good ones pass fast.
///
/// | level | when (any of)                                               | work |
/// |-------|-------------------------------------------------------------|------|
/// | 0     | nothing below                                               | x1   |
/// | 1     | a `review` in the last hour; 20+ ztokens in 10 minutes      | x4   |
/// | 2     | a `reject`, or 3+ `review`s, in the last hour               | x16  |
/// | 3     | 3+ `reject`s in the last hour; the device is deny-listed    | x64, and the captcha |
public enum AdaptiveDifficulty {
    public static let velocityThreshold = 20
    /// From this level an adaptive attester also asks for the slider captcha.
    public static let captchaLevel = 3

    /// Whether a token from `attester` needs a captcha pass, at the device's current `level`.
    public static func requiresCaptcha(_ attester: Attester, level: Int) -> Bool {
        attester.kind.asksForCaptcha || (attester.adaptive && level >= captchaLevel)
    }

    public static func level(_ activity: RecentDeviceActivity) -> Int {
        if activity.denyListed || activity.rejectsLastHour >= 3 { return 3 }
        if activity.rejectsLastHour >= 1 || activity.reviewsLastHour >= 3 { return 2 }
        if activity.reviewsLastHour >= 1 || activity.ztokensLastTenMinutes >= velocityThreshold { return 1 }
        return 0
    }

    /// The attester's difficulty scaled by 4^level: the classic format's number range, or v2's
    /// PBKDF2 iterations, each capped at its format's maximum.
    public static func difficulty(for attester: Attester, activity: RecentDeviceActivity) -> (difficulty: PowDifficulty, level: Int) {
        guard attester.adaptive else { return (attester.pow, 0) }
        let level = level(activity)
        let factor = 1 << (2 * level)
        var scaled = attester.pow
        scaled.maxNumber = min(scaled.maxNumber * factor, PowDifficulty.maxNumberRange.upperBound * 10)
        scaled.cost = min(scaled.cost * factor, PowDifficulty.costRange.upperBound)
        return (scaled, level)
    }
}
