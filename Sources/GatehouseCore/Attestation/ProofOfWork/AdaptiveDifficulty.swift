import Foundation

/// What a device did lately, as the store counts it for an adaptive attester.
public struct RecentDeviceActivity: Equatable, Sendable {
    /// Risk decisions about the device in the last hour, by verdict.
    public var reviewsLastHour: Int
    public var rejectsLastHour: Int
    /// ztokens of the device that risk queries consumed in the last ten minutes.
    public var ztokensLastTenMinutes: Int
    public var denyListed: Bool
    /// Request signatures of the device that failed in the last hour (bad MAC, replay, stale clock).
    public var signatureFailuresLastHour: Int

    public static let quiet = RecentDeviceActivity(reviewsLastHour: 0, rejectsLastHour: 0, ztokensLastTenMinutes: 0, denyListed: false)

    public init(reviewsLastHour: Int, rejectsLastHour: Int, ztokensLastTenMinutes: Int, denyListed: Bool, signatureFailuresLastHour: Int = 0) {
        self.reviewsLastHour = reviewsLastHour
        self.rejectsLastHour = rejectsLastHour
        self.ztokensLastTenMinutes = ztokensLastTenMinutes
        self.denyListed = denyListed
        self.signatureFailuresLastHour = signatureFailuresLastHour
    }
}

/// The adaptive curve (docs/attestation.md): suspicious devices pay more work, good ones pass fast.
///
/// | level | when (any of)                                               | work |
/// |-------|-------------------------------------------------------------|------|
/// | 0     | nothing below                                               | x1   |
/// | 1     | a `review`, or 3+ failed signatures, in the last hour; 20+ ztokens in 10 minutes | x4 |
/// | 2     | a `reject`, 3+ `review`s, or 10+ failed signatures, in the last hour | x16 |
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
        if activity.rejectsLastHour >= 1 || activity.reviewsLastHour >= 3 || activity.signatureFailuresLastHour >= 10 { return 2 }
        if activity.reviewsLastHour >= 1 || activity.signatureFailuresLastHour >= 3 || activity.ztokensLastTenMinutes >= velocityThreshold {
            return 1
        }
        return 0
    }

    /// The attester's difficulty scaled by 4^level: the classic format's number range, or v2's work.
    /// v2's PBKDF2 cost is what the server also pays once per verification, so it never passes its
    /// ceiling: work past it goes into the key prefix instead (each hex digit is 16 times the client's
    /// attempts and nothing to the server). Attesters stored before the ceiling are held to it too.
    public static func difficulty(for attester: Attester, activity: RecentDeviceActivity) -> (difficulty: PowDifficulty, level: Int) {
        let level = attester.adaptive ? level(activity) : 0
        let factor = 1 << (2 * level)
        var scaled = attester.pow
        scaled.maxNumber = min(scaled.maxNumber * factor, PowDifficulty.maxNumberRange.upperBound * 10)
        var cost = scaled.cost * factor
        while cost > PowDifficulty.costRange.upperBound && scaled.keyPrefix.utf8.count < PowDifficulty.keyPrefixLength.upperBound {
            cost = (cost + 15) / 16
            scaled.keyPrefix += "0"
        }
        scaled.cost = min(cost, PowDifficulty.costRange.upperBound)
        return (scaled, level)
    }
}
