import Foundation
import GatehouseCore
import GatehouseOperations
import GatehouseStore
import HTTPTypes
import Hummingbird

/// `/console/sign-in`, `/console/sign-out` and the console's style and script: the routes a browser
/// reaches before it has a session, each checking what it needs itself.
struct ConsoleSignInController {
    typealias Context = GatehouseRequestContext
    let pages: ConsolePages
    let tokens: any AdminTokenStore
    let sessions: any ConsoleSessionStore
    let clock: any GatehouseClock
    let throttle: SignInThrottle
    /// Counts a refused sign-in (`gatehouse_console_sign_in_failures_total`), by why.
    let onFailure: @Sendable (_ reason: String) -> Void

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/console/sign-in", for: .consoleEntry, use: signInPage)
        routes.on(.post, "/console/sign-in", for: .consoleEntry, use: signIn)
        routes.on(.post, "/console/sign-out", for: .consoleEntry, use: signOut)
        routes.on(.get, "/console/assets/console.css", for: .consoleEntry, use: stylesheet)
        routes.on(.get, "/console/assets/console.js", for: .consoleEntry, use: script)
    }

    @Sendable func signInPage(_ request: Request, context: Context) async throws -> Response {
        let ended = request.uri.queryParameters.get("ended") != nil
        return pages.page(SignInPage(notice: ended ? "Your session ended. Sign in again." : nil, error: nil), caller: nil)
    }

    @Sendable func signIn(_ request: Request, context: Context) async throws -> Response {
        // A sign-in posted from another site would sign the operator's browser in as the attacker.
        guard ConsoleForm.fromThisSite(request) else { return refused(.forbidden, "Sign in from this site's own page.") }
        let fields = try await ConsoleForm.read(request, context: context)
        let typed = fields["token"]?.trimmingCharacters(in: .whitespaces) ?? ""
        let address = context.clientAddress
        if let wait = await throttle.retryAfter(address: address, token: typed, at: clock.now()) {
            onFailure("throttled")
            var response = refused(.tooManyRequests, "Too many refused sign-ins; try again in \(wait) s.")
            response.headers[.retryAfter] = String(wait)
            return response
        }
        let presented = AdminToken.presented(typed)
        guard case .success(let plaintext) = presented else {
            return await failed(
                address: address,
                typed: typed,
                reason: "not_a_token",
                "That is not an admin token: gat_ followed by 43 letters and digits.",
                context
            )
        }
        let record = try await tokens.adminToken(withHash: CredentialDigest.of(plaintext))
        guard case .success(let token) = AdminToken.admit(record, at: clock.now()) else {
            return await failed(address: address, typed: typed, reason: "unknown_token", "No live admin token matches the one entered.", context)
        }
        var generator = SystemRandomNumberGenerator()
        let now = clock.now()
        let opened = ConsoleSession.open(for: token, at: now, using: &generator)
        try await sessions.openConsoleSession(opened.session, idleBefore: ConsoleSession.idleCutoff(at: now))
        context.logger.info("console sign-in", metadata: ["token": .string(token.name)])
        return ConsolePages.seeOther("/console", headers: [.setCookie: ConsoleCookie.set(opened.cookie, context)])
    }

    @Sendable func signOut(_ request: Request, context: Context) async throws -> Response {
        guard let cookie = ConsoleSession.presented(inCookieHeader: request.headers.value(.cookie)) else {
            return ConsolePages.seeOther("/console/sign-in")
        }
        let fields = try await ConsoleForm.read(request, context: context)
        guard ConsoleForm.fromThisSite(request), ConsoleForgery.tokenMatches(fields[ConsoleForgery.fieldName], cookie: cookie) else {
            throw DomainError(.consoleFormRefused, "This form did not come from this session's console page.")
        }
        try await sessions.closeConsoleSession(withHash: CredentialDigest.of(cookie))
        return ConsolePages.seeOther("/console/sign-in", headers: [.setCookie: ConsoleCookie.cleared(context)])
    }

    @Sendable func stylesheet(_ request: Request, context: Context) async throws -> Response {
        asset(pages.stylesheet, contentType: "text/css; charset=utf-8")
    }

    @Sendable func script(_ request: Request, context: Context) async throws -> Response {
        asset(pages.script, contentType: "text/javascript; charset=utf-8")
    }

    private func asset(_ text: String, contentType: String) -> Response {
        var headers = ConsolePages.headers(contentType: contentType)
        headers[.cacheControl] = "public, max-age=300"
        return Response(status: .ok, headers: headers, body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// A refused sign-in: counted against its address and token prefix, logged with the address (never
    /// what was typed), counted on /metrics.
    private func failed(address: String?, typed: String, reason: String, _ message: String, _ context: Context) async -> Response {
        await throttle.failed(address: address, token: typed, at: clock.now())
        context.logger.warning("console sign-in refused", metadata: ["address": .string(address ?? "unknown"), "reason": .string(reason)])
        onFailure(reason)
        return refused(.unauthorized, message)
    }

    private func refused(_ status: HTTPResponse.Status, _ message: String) -> Response {
        pages.page(SignInPage(notice: nil, error: message), caller: nil, status: status)
    }
}

extension ConsoleSignInController {
    struct SignInPage: ConsolePage {
        static let template = "sign-in"
        let notice: String?
        let error: String?
    }
}
