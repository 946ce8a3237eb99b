import Foundation
import GatehouseAPI
import GatehouseCore
import HTTPTypes
import Hummingbird

/// The slider captcha: the page and its script, puzzles and answers (called by the page, so
/// CORS-open and secret-free), and Turnstile-style siteverify for the app's backend.
struct CaptchaController {
    let captcha: CaptchaOperations
    let embedOrigins: [String]

    func register(on routes: inout RouteRegistrar) {
        let html = CaptchaPage.html(embedOrigins: embedOrigins)
        let policy = CaptchaPage.policy(embedOrigins: embedOrigins)
        routes.on(.get, "/captcha", for: .open) { _, _ in
            CaptchaPage.response(html, contentType: "text/html; charset=utf-8", policy: policy)
        }
        routes.on(.get, "/captcha/slider.js", for: .open) { _, _ in
            CaptchaPage.response(CaptchaPage.script, contentType: "text/javascript; charset=utf-8", policy: policy)
        }
        routes.on(.post, "/v1/captcha/challenges", for: .open) { request, context in
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
                return Self.corsOpen(try JSONBody.response(Components.Schemas.CaptchaChallenge(issued)))
            }
        }
        routes.on(.post, "/v1/captcha/challenges/:challengeId/answers", for: .open) { request, context in
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
                return Self.corsOpen(try JSONBody.response(Components.Schemas.CaptchaAnswerResult(challenge, outcome)))
            }
        }
        for path in ["/v1/captcha/challenges", "/v1/captcha/challenges/:challengeId/answers"] {
            routes.on(.options, path, for: .open) { _, _ in
                Response(
                    status: .noContent,
                    headers: [
                        .accessControlAllowOrigin: "*", .accessControlAllowMethods: "POST", .accessControlAllowHeaders: "Content-Type",
                        .accessControlMaxAge: "600",
                    ]
                )
            }
        }
        routes.on(.post, "/v1/captcha/siteverify", for: .open) { request, context in
            let buffer = try await JSONBody.collect(request, context: context)
            var verdict = CaptchaOperations.Verdict.failure(.badRequest)
            if let input = try Siteverify.Input.parse(try JSONBody.text(buffer), contentType: request.headers[.contentType]) {
                verdict = try await captcha.siteverify(input)
            }
            // Turnstile's one structural refusal, `bad-request`, is also a 400; the rest are verdicts.
            return try JSONBody.response(
                Components.Schemas.SiteverifyResponse(verdict),
                status: verdict == .failure(.badRequest) ? .badRequest : .ok
            )
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
}
