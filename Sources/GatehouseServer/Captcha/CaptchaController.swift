import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseOperations
import HTTPTypes
import Hummingbird

/// The slider captcha: the page and its script, puzzles and answers (called by the page, so
/// CORS-open and secret-free), and Turnstile-style siteverify for the app's backend.
struct CaptchaController {
    typealias Context = GatehouseRequestContext
    let captcha: CaptchaOperations
    /// The page and its Content-Security-Policy, made once: they name the configured embed origins.
    let html: String
    let script: String
    let policy: String

    init(captcha: CaptchaOperations, assets: CaptchaAssets, embedOrigins: [String]) {
        self.captcha = captcha
        self.html = assets.html(embedOrigins: embedOrigins)
        self.script = assets.script
        self.policy = CaptchaPage.policy(embedOrigins: embedOrigins, style: assets.style)
    }

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/captcha", for: .open, use: page)
        routes.on(.get, "/captcha/slider.js", for: .open, use: script)
        routes.on(.post, "/v1/captcha/challenges", for: .captcha, use: challenge)
        routes.on(.post, "/v1/captcha/challenges/:challengeId/answers", for: .captcha, use: answer)
        for path in ["/v1/captcha/challenges", "/v1/captcha/challenges/:challengeId/answers"] {
            routes.on(.options, path, for: .open, use: preflight)
        }
        routes.on(.post, "/v1/captcha/siteverify", for: .open, use: siteverify)
    }

    @Sendable func page(_ request: Request, context: Context) async throws -> Response {
        CaptchaPage.response(html, contentType: "text/html; charset=utf-8", policy: policy)
    }

    @Sendable func script(_ request: Request, context: Context) async throws -> Response {
        CaptchaPage.response(script, contentType: "text/javascript; charset=utf-8", policy: policy)
    }

    @Sendable func challenge(_ request: Request, context: Context) async throws -> Response {
        let body = try await JSONBody.decode(Components.Schemas.CaptchaChallengeRequest.self, from: request, context: context)
        let parsed = try CaptchaRequest(
            language: body.language?.rawValue,
            deviceID: body.deviceId,
            attestID: body.attestId,
            action: body.action,
            cdata: body.cdata
        )
        let issued = try await captcha.createChallenge(
            appKey: try AppKey(validating: body.appKey),
            request: parsed,
            hostname: Self.hostname(of: request),
            address: context.clientAddress
        )
        return Self.corsOpen(try JSONBody.response(Components.Schemas.CaptchaChallenge(issued)))
    }

    @Sendable func answer(_ request: Request, context: Context) async throws -> Response {
        let body = try await JSONBody.decode(Components.Schemas.CaptchaAnswerRequest.self, from: request, context: context)
        let answer = try DragAnswer(
            position: body.position,
            durationMs: body.durationMs,
            trajectory: body.trajectory.map { DragPoint(x: $0.x, y: $0.y, t: $0.t) }
        )
        let (challenge, outcome) = try await captcha.answer(
            appKey: try AppKey(validating: body.appKey),
            challengeID: context.parameters.get("challengeId") ?? "",
            answer: answer,
            address: context.clientAddress
        )
        return Self.corsOpen(try JSONBody.response(Components.Schemas.CaptchaAnswerResult(challenge, outcome)))
    }

    /// CORS preflight: the page may be served from the app's own origin.
    @Sendable func preflight(_ request: Request, context: Context) async throws -> Response {
        Response(
            status: .noContent,
            headers: [
                .accessControlAllowOrigin: "*", .accessControlAllowMethods: "POST", .accessControlAllowHeaders: "Content-Type",
                .accessControlMaxAge: "600",
            ]
        )
    }

    @Sendable func siteverify(_ request: Request, context: Context) async throws -> Response {
        let buffer = try await JSONBody.collect(request, context: context)
        var verdict = CaptchaOperations.Verdict.failure(.badRequest)
        if let input = try Siteverify.Input.parse(try JSONBody.text(buffer), contentType: request.headers.value(.contentType)) {
            verdict = try await captcha.siteverify(input)
        }
        // Turnstile's one structural refusal, `bad-request`, is also a 400; the rest are verdicts.
        return try JSONBody.response(
            Components.Schemas.SiteverifyResponse(verdict),
            status: verdict == .failure(.badRequest) ? .badRequest : .ok
        )
    }

    private static func corsOpen(_ response: Response) -> Response {
        var response = response
        response.headers[.accessControlAllowOrigin] = "*"
        return response
    }

    /// Siteverify's `hostname`: where the page ran, from `Origin` (browsers send it on POST), else `Host`.
    static func hostname(of request: Request) -> String? {
        let host: String?
        if let origin = request.headers.value(.origin), origin != "null", let parsed = URL(string: origin)?.host {
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
