// Captcha: the slider captcha's page, puzzles, answers and pass tokens, and siteverify.
// Serves seeds 000 (slider codes 1001-1005) and 001 (the captcha an attester may ask for).

import Foundation

/// A captcha challenge's id, also the `traceId` the seed's `getTraceId` returns: 22 base62 characters.
public struct CaptchaID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(validating text: String) throws(DomainError) {
        guard text.utf8.count == 22, text.allSatisfy(RandomText.base62.contains) else {
            throw DomainError(.captchaNotFound, "No captcha challenge has this id.", field: "challengeId")
        }
        rawValue = text
    }

    public static func generate<R: RandomNumberGenerator>(using generator: inout R) -> CaptchaID {
        CaptchaID(unchecked: RandomText.make(length: 22, alphabet: RandomText.base62, using: &generator))
    }

    private init(unchecked: String) { rawValue = unchecked }
    public var description: String { rawValue }
}

/// The page's language; the seed's `TTOption.language` takes `cn` or `en`.
public enum CaptchaLanguage: String, Sendable, CaseIterable {
    case cn, en
}

public enum CaptchaState: String, Sendable {
    case open, passed, dead
}

/// What the app's page asked for, checked: the same limits Turnstile puts on `action` and `cData`.
public struct CaptchaRequest: Sendable, Equatable {
    public let language: CaptchaLanguage
    public let deviceID: DeviceID?
    public let attestID: AttestID?
    public let action: String?
    public let cdata: String?

    public init(language: String?, deviceID: String?, attestID: String?, action: String?, cdata: String?) throws(DomainError) {
        guard let language = CaptchaLanguage(rawValue: language ?? CaptchaLanguage.en.rawValue) else {
            throw DomainError(.invalidCaptchaRequest, "language is cn or en.", field: "language")
        }
        self.language = language
        self.deviceID = try deviceID.map { text throws(DomainError) in try DeviceID(validating: text) }
        self.attestID = try attestID.map { text throws(DomainError) in try AttestID(validating: text) }
        self.action = try Self.label(action, field: "action", maximum: 32)
        self.cdata = try Self.label(cdata, field: "cdata", maximum: 255)
    }

    private static func label(_ text: String?, field: String, maximum: Int) throws(DomainError) -> String? {
        guard let text else { return nil }
        let allowed = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-".utf8)
        guard (1...maximum).contains(text.utf8.count), text.utf8.allSatisfy(allowed.contains) else {
            throw DomainError(.invalidCaptchaRequest, "\(field) is 1 to \(maximum) characters of A-Z, a-z, 0-9, _ and -.", field: field)
        }
        return text
    }
}

/// A slider challenge as the server keeps it: the answer never leaves the server.
public struct CaptchaChallenge: Sendable, Equatable {
    public static let attempts = 3
    public static let lifetimeSeconds = 120.0

    public let id: CaptchaID
    public let appID: AppID
    public let request: CaptchaRequest
    public let answer: PuzzleAnswer
    /// Where the page runs (the `Origin` of its request, else the `Host`), reported by siteverify.
    public let hostname: String?
    public let clientAddress: String?
    public var attemptsLeft: Int
    public var state: CaptchaState
    public let createdAt: Date
    public let expiresAt: Date

    public init(
        id: CaptchaID,
        appID: AppID,
        request: CaptchaRequest,
        answer: PuzzleAnswer,
        hostname: String?,
        clientAddress: String?,
        attemptsLeft: Int,
        state: CaptchaState,
        createdAt: Date,
        expiresAt: Date
    ) {
        self.id = id
        self.appID = appID
        self.request = request
        self.answer = answer
        self.hostname = hostname
        self.clientAddress = clientAddress
        self.attemptsLeft = attemptsLeft
        self.state = state
        self.createdAt = createdAt
        self.expiresAt = expiresAt
    }

    /// A fresh challenge around a generated puzzle.
    public static func open(
        id: CaptchaID,
        appID: AppID,
        request: CaptchaRequest,
        answer: PuzzleAnswer,
        hostname: String?,
        clientAddress: String?,
        at now: Date
    ) -> CaptchaChallenge {
        CaptchaChallenge(
            id: id,
            appID: appID,
            request: request,
            answer: answer,
            hostname: hostname,
            clientAddress: clientAddress,
            attemptsLeft: attempts,
            state: .open,
            createdAt: now,
            expiresAt: now.addingTimeInterval(lifetimeSeconds)
        )
    }

    /// How an answer fared: a pass, or a miss and why (`wrong_position` or a `RoboticDrag`).
    public enum Judgement: Sendable, Equatable {
        case passed
        case missed(reason: String)
    }

    /// Judges an answer to this challenge; throws when the challenge can no longer be answered.
    public func judge(_ answer: DragAnswer, at now: Date) throws(DomainError) -> Judgement {
        guard now < expiresAt else {
            throw DomainError(.captchaExpired, "This captcha challenge expired; fetch a new one.", field: "challengeId")
        }
        switch state {
        case .passed: throw DomainError(.captchaSolved, "This captcha challenge was already solved; fetch a new one.", field: "challengeId")
        case .dead: throw DomainError(.captchaExhausted, "This captcha challenge has no attempts left; fetch a new one.", field: "challengeId")
        case .open: break
        }
        if let robotic = HumanDrag.judge(answer) { return .missed(reason: robotic.rawValue) }
        return SliderPuzzle.fits(answer.position, answer: self.answer) ? .passed : .missed(reason: "wrong_position")
    }
}
