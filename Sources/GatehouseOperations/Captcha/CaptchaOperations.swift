// Captcha: the slider captcha's page, puzzles, answers and pass tokens, and siteverify.
// Serves seeds 000 (slider codes 1001-1005) and 001 (the captcha an attester may ask for).

import Foundation
import GatehouseCore
import GatehouseStore

/// The slider captcha: puzzles for the page, judged answers, and pass tokens redeemed by siteverify
/// (or by an attester, or a secondary verification).
public struct CaptchaOperations: Sendable {
    let store: any CaptchaStore
    let attesters: any AttestationStore
    let apps: AppOperations
    let clock: any GatehouseClock
    let limits: RateLimits

    public init(store: any CaptchaStore, attesters: any AttestationStore, apps: AppOperations, clock: any GatehouseClock, limits: RateLimits) {
        self.store = store
        self.attesters = attesters
        self.apps = apps
        self.clock = clock
        self.limits = limits
    }

    public struct IssuedPuzzle: Sendable {
        public let challenge: CaptchaChallenge
        public let puzzle: SliderPuzzle
    }

    public func createChallenge(appKey: AppKey, request: CaptchaRequest, hostname: String?, address: String?) async throws -> IssuedPuzzle {
        let now = clock.now()
        try await limits.admit(.captchaChallenge, address: address, device: request.deviceID, at: now)
        let app = try await apps.app(appKey)
        try app.requireActive()
        if let attestID = request.attestID {
            guard let stored = try await attesters.attester(appID: app.id, attestID: attestID) else {
                throw DomainError(.attesterNotFound, "App \(app.appKey) has no attester \(attestID).", field: "attestId")
            }
            guard stored.attester.status == .active else {
                throw DomainError(.attesterDisabled, "Attester \(attestID) is disabled.", field: "attestId")
            }
        }
        var generator = SystemRandomNumberGenerator()
        let puzzle = SliderPuzzle.generate()
        let challenge = CaptchaChallenge.open(
            id: CaptchaID.generate(using: &generator),
            appID: app.id,
            request: request,
            answer: puzzle.answer,
            hostname: hostname,
            clientAddress: address,
            at: now
        )
        try await store.createCaptchaChallenge(challenge)
        store.countActivity([ActivityKey(appID: app.id, at: now, metric: .captchaIssued, label: "")])
        return IssuedPuzzle(challenge: challenge, puzzle: puzzle)
    }

    public enum AnswerOutcome: Sendable, Equatable {
        case passed(token: String, pass: CaptchaPass)
        case missed(reason: String, attemptsLeft: Int)
    }

    public func answer(appKey: AppKey, challengeID: String, answer: DragAnswer, address: String?) async throws -> (CaptchaChallenge, AnswerOutcome) {
        let now = clock.now()
        try await limits.admit(.captchaAnswer, address: address, device: nil, at: now)
        let app = try await apps.app(appKey)
        try app.requireActive()
        let id = try CaptchaID(validating: challengeID)
        guard let challenge = try await store.captchaChallenge(appID: app.id, id: id) else {
            throw DomainError(.captchaNotFound, "No captcha challenge has this id.", field: "challengeId")
        }
        let judgement = try challenge.judge(answer, at: now)
        var generator = SystemRandomNumberGenerator()
        let issued = judgement == .passed ? CaptchaPass.issue(for: challenge, at: now, using: &generator) : nil
        guard let left = try await store.recordCaptchaAttempt(challenge, pass: issued?.pass, at: now) else {
            throw DomainError(.captchaExhausted, "Another answer closed this captcha challenge; fetch a new one.", field: "challengeId")
        }
        store.countActivity([ActivityKey(appID: app.id, at: now, metric: judgement == .passed ? .captchaPassed : .captchaFailed, label: "")])
        switch judgement {
        case .passed: return (challenge, .passed(token: issued!.token, pass: issued!.pass))
        case .missed(let reason): return (challenge, .missed(reason: reason, attemptsLeft: left))
        }
    }

    public enum Verdict: Sendable, Equatable {
        case success(CaptchaPass, appKey: AppKey, remoteIPMatches: Bool?)
        case failure(Siteverify.ErrorCode)
    }

    /// Turnstile-style verification by the app's backend: every refusal is an error code, never a throw,
    /// except when the database cannot answer.
    public func siteverify(_ input: Siteverify.Input) async throws -> Verdict {
        let checked: Siteverify.Checked
        switch Siteverify.check(input) {
        case .failure(let code): return .failure(code)
        case .success(let value): checked = value
        }
        guard case .success(let admitted) = try await apps.admitBackend(appKey: checked.appKey, secret: checked.serverSecret) else {
            return .failure(.invalidInputSecret)
        }
        switch try await store.redeemCaptchaPass(
            appID: admitted.app.id,
            tokenHash: checked.tokenHash,
            as: .siteverify(idempotencyKey: checked.idempotencyKey),
            at: clock.now()
        ) {
        case .unknown: return .failure(.invalidInputResponse)
        case .spent: return .failure(.timeoutOrDuplicate)
        case .valid(let pass):
            return .success(pass, appKey: admitted.app.appKey, remoteIPMatches: checked.remoteIP.map { $0 == pass.challenge.clientAddress })
        }
    }
}
