// Captcha: the slider captcha's page, puzzles, answers and pass tokens, and siteverify.
// Serves seeds 000 (slider codes 1001-1005) and 001 (the captcha an attester may ask for).

import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseOperations

extension Components.Schemas.CaptchaChallenge {
    init(_ issued: CaptchaOperations.IssuedPuzzle) {
        let challenge = issued.challenge
        self.init(
            code: ._0,
            challengeId: challenge.id.rawValue,
            traceId: challenge.id.rawValue,
            language: challenge.request.language == .cn ? .cn : .en,
            expiresAt: challenge.expiresAt,
            attempts: challenge.attemptsLeft,
            width: SliderPuzzle.width,
            height: SliderPuzzle.height,
            pieceWidth: SliderPuzzle.pieceSize,
            background: "data:image/png;base64," + Data(issued.puzzle.background).base64EncodedString(),
            piece: "data:image/png;base64," + Data(issued.puzzle.piece).base64EncodedString()
        )
    }
}

extension Components.Schemas.CaptchaAnswerResult {
    init(_ challenge: CaptchaChallenge, _ outcome: CaptchaOperations.AnswerOutcome) {
        switch outcome {
        case .passed(let token, let pass):
            self.init(code: ._0, message: "success", traceId: challenge.id.rawValue, passToken: token, expiresAt: pass.expiresAt)
        case .missed(let reason, let left):
            self.init(code: ._1001, message: "Verification failed.", traceId: challenge.id.rawValue, reason: reason, attemptsLeft: left)
        }
    }
}

extension Components.Schemas.SiteverifyResponse {
    init(_ verdict: CaptchaOperations.Verdict) {
        switch verdict {
        case .failure(let code):
            self.init(success: false, errorCodes: [.init(rawValue: code.rawValue)!])
        case .success(let pass, let appKey, let remoteIPMatches):
            self.init(
                success: true,
                challengeTs: pass.solvedAt,
                hostname: pass.challenge.hostname,
                action: pass.challenge.request.action,
                cdata: pass.challenge.request.cdata,
                errorCodes: [],
                metadata: .init(
                    appKey: appKey.rawValue,
                    traceId: pass.challenge.id.rawValue,
                    deviceId: pass.challenge.request.deviceID?.rawValue,
                    attestId: pass.challenge.request.attestID?.rawValue,
                    remoteipMatches: remoteIPMatches
                )
            )
        }
    }
}

extension Siteverify.Input {
    /// Turnstile's fields from a form or a JSON body; nil for a body that does not parse (`bad-request`).
    static func parse(_ text: String, contentType: String?) throws -> Siteverify.Input? {
        let mediaType = JSONBody.mediaType(of: contentType)
        var fields: [String: String] = [:]
        switch mediaType {
        case "application/x-www-form-urlencoded":
            guard let parsed = FormFields.parse(text) else { return nil }
            fields = parsed
        case "application/json":
            guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else { return nil }
            for (name, value) in object {
                guard let string = value as? String else { return nil }
                fields[name] = string
            }
        default:
            throw Problem(
                .unsupportedMediaType,
                code: "unsupported_media_type",
                title: "Unsupported media type",
                detail: "Send application/x-www-form-urlencoded or application/json, as to Turnstile."
            )
        }
        return Siteverify.Input(
            secret: fields["secret"],
            response: fields["response"],
            remoteIP: fields["remoteip"],
            idempotencyKey: fields["idempotency_key"]
        )
    }
}
