import Foundation
import GatehouseCore

/// Slider challenges, their attempts and the passes they grant.
public final class SQLCaptchaStore: CapabilityStore {
    let database: any SQLDatabase
    let changes: StoreChanges
    let activity: ActivityTally

    init(database: any SQLDatabase, changes: StoreChanges, activity: ActivityTally) {
        self.database = database
        self.changes = changes
        self.activity = activity
    }
}

extension SQLCaptchaStore: CaptchaStore {
    public func countActivity(_ keys: [ActivityKey]) { activity.add(keys) }

    public func createCaptchaChallenge(_ challenge: CaptchaChallenge) async throws(StoreError) {
        let request = challenge.request
        try await database.query(
            """
            INSERT INTO captcha_challenges (app_id, challenge_id, language, device_id, attest_id, action, cdata, hostname, client_address,
                                            answer_x, answer_y, attempts_left, state, created_at, expires_at)
            VALUES (\(.uuid(challenge.appID.rawValue)), \(.text(challenge.id.rawValue)), \(.text(request.language.rawValue)),
              \(.optional(request.deviceID?.rawValue)), \(.optional(request.attestID?.rawValue)), \(.optional(request.action)),
              \(.optional(request.cdata)), \(.optional(challenge.hostname)), \(.optional(challenge.clientAddress)),
              \(.int(Int64(challenge.answer.x))), \(.int(Int64(challenge.answer.y))), \(.int(Int64(challenge.attemptsLeft))),
              \(.text(challenge.state.rawValue)), \(.date(challenge.createdAt)), \(.date(challenge.expiresAt)))
            """
        )
    }

    public func captchaChallenge(appID: AppID, id: CaptchaID) async throws(StoreError) -> CaptchaChallenge? {
        try await database.query(
            "SELECT * FROM captcha_challenges WHERE app_id = \(.uuid(appID.rawValue)) AND challenge_id = \(.text(id.rawValue))"
        ).first.map(Self.captchaChallenge)
    }

    public func recordCaptchaAttempt(_ challenge: CaptchaChallenge, pass: CaptchaPass?, at now: Date) async throws(StoreError) -> Int? {
        do {
            return try await database.transaction { transaction in
                // The WHERE clause is the guard: two answers racing for the last attempt (or both
                // right) cannot both count.
                let rows = try await transaction.query(
                    """
                    UPDATE captcha_challenges
                    SET attempts_left = attempts_left - 1,
                        state = CASE WHEN \(.int(pass == nil ? 0 : 1)) = 1 THEN 'passed' WHEN attempts_left = 1 THEN 'dead' ELSE 'open' END
                    WHERE app_id = \(.uuid(challenge.appID.rawValue)) AND challenge_id = \(.text(challenge.id.rawValue)) AND state = 'open' AND
                      attempts_left > 0 AND expires_at > \(.date(now))
                    RETURNING attempts_left
                    """
                )
                guard let left = rows.first else { return nil }
                if let pass {
                    try await transaction.query(
                        """
                        INSERT INTO captcha_passes (app_id, token_hash, challenge_id, solved_at, expires_at, redemption, redeemed_at)
                        VALUES (\(.uuid(pass.appID.rawValue)), \(.text(pass.tokenHash)), \(.text(challenge.id.rawValue)), \(.date(pass.solvedAt)),
                          \(.date(pass.expiresAt)), NULL, NULL)
                        """
                    )
                }
                return Int(try left.int("attempts_left"))
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw .unavailable(String(describing: type(of: error)))
        }
    }

    public func redeemCaptchaPass(
        appID: AppID,
        tokenHash: String,
        as redemption: PassRedemption,
        at now: Date
    ) async throws(StoreError)
        -> PassRedemptionOutcome
    {
        let redeemed = try await database.query(
            """
            UPDATE captcha_passes SET redemption = \(.text(redemption.storedValue)), redeemed_at = \(.date(now))
            WHERE app_id = \(.uuid(appID.rawValue)) AND token_hash = \(.text(tokenHash)) AND redemption IS NULL AND expires_at > \(.date(now))
            RETURNING token_hash
            """
        )
        let rows = try await database.query(
            """
            SELECT p.token_hash, p.solved_at, p.expires_at AS pass_expires_at, p.redemption, p.redeemed_at, c.*
            FROM captcha_passes p JOIN captcha_challenges c ON c.app_id = p.app_id AND c.challenge_id = p.challenge_id
            WHERE p.app_id = \(.uuid(appID.rawValue)) AND p.token_hash = \(.text(tokenHash))
            """
        )
        let pass = try rows.first.map { row throws(StoreError) in
            CaptchaPass(
                tokenHash: try row.text("token_hash"),
                appID: appID,
                challenge: try Self.captchaChallenge(row),
                solvedAt: try row.date("solved_at"),
                expiresAt: try row.date("pass_expires_at"),
                redemption: try row.optionalText("redemption").flatMap(PassRedemption.init(storedValue:)),
                redeemedAt: try row.optionalDate("redeemed_at")
            )
        }
        return PassRedemptionOutcome.classify(pass, redeemedNow: !redeemed.isEmpty, as: redemption)
    }

    static func captchaChallenge(_ row: SQLRow) throws(StoreError) -> CaptchaChallenge {
        guard let id = try? CaptchaID(validating: try row.text("challenge_id")), let state = CaptchaState(rawValue: try row.text("state")),
            let request = try? CaptchaRequest(
                language: try row.text("language"),
                deviceID: try row.optionalText("device_id"),
                attestID: try row.optionalText("attest_id"),
                action: try row.optionalText("action"),
                cdata: try row.optionalText("cdata")
            )
        else { throw .corruptRow("captcha challenge row") }
        return CaptchaChallenge(
            id: id,
            appID: AppID(try row.uuid("app_id")),
            request: request,
            answer: PuzzleAnswer(x: Int(try row.int("answer_x")), y: Int(try row.int("answer_y"))),
            hostname: try row.optionalText("hostname"),
            clientAddress: try row.optionalText("client_address"),
            attemptsLeft: Int(try row.int("attempts_left")),
            state: state,
            createdAt: try row.date("created_at"),
            expiresAt: try row.date("expires_at")
        )
    }
}

extension SQLCaptchaStore: ExpiringRows {
    /// Pass tokens, then the challenges they point at, an hour past their expiry.
    func deleteExpired(_ round: RetentionRound, in locked: any SQLDatabase) async throws -> PurgeReport {
        var report = PurgeReport()
        report.captchas += try await deleteExpired(.captchaPasses, key: "token_hash", round, in: locked)
        report.captchas += try await deleteExpired(.captchaChallenges, key: "challenge_id", round, in: locked)
        return report
    }
}
