import Foundation
import GatehouseAPI
import GatehouseCore
import HTTPTypes
import Hummingbird

/// The slider captcha: the page and its script, puzzles and answers (called by the page, so
/// CORS-open and secret-free), and Turnstile-style siteverify for the app's backend.
struct CaptchaController {
    let captcha: CaptchaOperations

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/captcha") { _, _ in
            CaptchaPage.response(CaptchaPage.html, contentType: "text/html; charset=utf-8")
        }
        routes.on(.get, "/captcha/slider.js") { _, _ in
            CaptchaPage.response(CaptchaPage.script, contentType: "text/javascript; charset=utf-8")
        }
        routes.on(.post, "/v1/captcha/challenges") { request, context in
            try await Self.captchaErrors {
                let body = try await JSONBody.decode(Components.Schemas.CaptchaChallengeRequest.self, from: request, context: context)
                let parsed = try CaptchaRequest(
                    language: body.language?.rawValue,
                    deviceID: body.deviceId,
                    attestID: body.attestId,
                    action: body.action,
                    cdata: body.cdata
                )
                let issued = try await captcha.createChallenge(
                    appKey: body.appKey,
                    request: parsed,
                    hostname: Self.hostname(of: request),
                    address: context.clientAddress
                )
                let challenge = issued.challenge
                return Self.corsOpen(
                    try JSONBody.response(
                        Components.Schemas.CaptchaChallenge(
                            code: ._0,
                            challengeId: challenge.id.rawValue,
                            traceId: challenge.id.rawValue,
                            language: .init(rawValue: challenge.request.language.rawValue)!,
                            expiresAt: challenge.expiresAt,
                            attempts: challenge.attemptsLeft,
                            width: SliderPuzzle.width,
                            height: SliderPuzzle.height,
                            pieceWidth: SliderPuzzle.pieceSize,
                            background: "data:image/png;base64," + Data(issued.puzzle.background).base64EncodedString(),
                            piece: "data:image/png;base64," + Data(issued.puzzle.piece).base64EncodedString()
                        )
                    )
                )
            }
        }
        routes.on(.post, "/v1/captcha/challenges/:challengeId/answers") { request, context in
            try await Self.captchaErrors {
                let body = try await JSONBody.decode(Components.Schemas.CaptchaAnswerRequest.self, from: request, context: context)
                let answer = try DragAnswer(
                    position: body.position,
                    durationMs: body.durationMs,
                    trajectory: body.trajectory.map { DragPoint(x: $0.x, y: $0.y, t: $0.t) }
                )
                let (challenge, outcome) = try await captcha.answer(
                    appKey: body.appKey,
                    challengeID: context.parameters.get("challengeId") ?? "",
                    answer: answer,
                    address: context.clientAddress
                )
                let result: Components.Schemas.CaptchaAnswerResult =
                    switch outcome {
                    case .passed(let token, let pass):
                        .init(code: ._0, message: "success", traceId: challenge.id.rawValue, passToken: token, expiresAt: pass.expiresAt)
                    case .missed(let reason, let left):
                        .init(code: ._1001, message: "Verification failed.", traceId: challenge.id.rawValue, reason: reason, attemptsLeft: left)
                    }
                return Self.corsOpen(try JSONBody.response(result))
            }
        }
        for path in ["/v1/captcha/challenges", "/v1/captcha/challenges/:challengeId/answers"] {
            routes.on(.options, path) { _, _ in
                Response(
                    status: .noContent,
                    headers: [
                        .accessControlAllowOrigin: "*", .accessControlAllowMethods: "POST", .accessControlAllowHeaders: "Content-Type",
                        .accessControlMaxAge: "600",
                    ]
                )
            }
        }
        routes.on(.post, "/v1/captcha/siteverify") { request, context in
            let buffer = try await JSONBody.collect(request, context: context)
            var verdict = CaptchaOperations.Verdict.failure(.badRequest)
            if let input = try Self.siteverifyInput(String(buffer: buffer), contentType: request.headers[.contentType]) {
                verdict = try await captcha.siteverify(input)
            }
            let response: Components.Schemas.SiteverifyResponse =
                switch verdict {
                case .failure(let code):
                    .init(success: false, errorCodes: [.init(rawValue: code.rawValue)!])
                case .success(let pass, let appKey, let remoteIPMatches):
                    .init(
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
            // Turnstile's one structural refusal, `bad-request`, is also a 400; the rest are verdicts.
            return try JSONBody.response(response, status: verdict == .failure(.badRequest) ? .badRequest : .ok)
        }
    }

    private static func captchaErrors(_ body: () async throws -> Response) async throws -> Response {
        do {
            return try await body()
        } catch {
            throw CaptchaError.from(error)
        }
    }

    private static func corsOpen(_ response: Response) -> Response {
        var response = response
        response.headers[.accessControlAllowOrigin] = "*"
        return response
    }

    /// Siteverify's `hostname`: where the page ran, from `Origin` (browsers send it on POST), else `Host`.
    static func hostname(of request: Request) -> String? {
        let host: String?
        if let origin = request.headers[.origin], origin != "null", let parsed = URL(string: origin)?.host {
            host = parsed
        } else {
            host = request.head.authority.map { authority in
                authority.hasPrefix("[") ? String(authority.prefix { $0 != "]" }.dropFirst()) : String(authority.split(separator: ":").first ?? "")
            }
        }
        guard let host, (1...253).contains(host.utf8.count) else { return nil }
        return host.lowercased()
    }

    /// Turnstile's fields from a form or a JSON body; nil for a body that does not parse (`bad-request`).
    static func siteverifyInput(_ text: String, contentType: String?) throws -> Siteverify.Input? {
        let mediaType = contentType?.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
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
