// Captcha: the slider captcha's page, puzzles, answers and pass tokens, and siteverify.
// Serves seeds 000 (slider codes 1001-1005) and 001 (the captcha an attester may ask for).

import Foundation
import GatehouseCore

/// What the slider captcha persists: challenges with their answers, and pass tokens (hashed).
public protocol CaptchaStore: ActivityCounting {
    func createCaptchaChallenge(_ challenge: CaptchaChallenge) async throws(StoreError)
    func captchaChallenge(appID: AppID, id: CaptchaID) async throws(StoreError) -> CaptchaChallenge?
    /// Counts one judged attempt, only while the challenge is still open with attempts left; a pass
    /// closes it and stores `pass` in the same transaction. Returns the attempts left, or nil when
    /// the challenge was closed meanwhile (a concurrent answer took the last attempt or passed).
    func recordCaptchaAttempt(_ challenge: CaptchaChallenge, pass: CaptchaPass?, at now: Date) async throws(StoreError) -> Int?
    /// Redeems a pass token once, atomically; an idempotent siteverify retry reads as valid again.
    func redeemCaptchaPass(
        appID: AppID,
        tokenHash: String,
        as redemption: PassRedemption,
        at now: Date
    ) async throws(StoreError)
        -> PassRedemptionOutcome
}
