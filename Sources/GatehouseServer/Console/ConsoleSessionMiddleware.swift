import GatehouseCore
import GatehouseStore
import HTTPTypes
import Hummingbird

/// The operator a console page is for: the admin token behind the session, and the session's form token.
struct ConsoleCaller: Sendable {
    let tokenName: String
    let role: AdminRole
    let csrf: String
}

/// The guard of the console's sign-in and sign-out and its assets: no session needed, but whatever
/// goes wrong (a body too large, the database gone) is a page, as behind the session guard.
struct ConsoleErrorPages: RouterMiddleware {
    typealias Context = GatehouseRequestContext
    let pages: ConsolePages
    let problems: ProblemMiddleware

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        do {
            return try await next(request, context)
        } catch {
            return page(for: error, request: request, context: context)
        }
    }

    /// The error as the API would answer it (`ProblemMiddleware`'s mapping), rendered as a page.
    func page(for error: any Error, request: Request, context: Context) -> Response {
        let mapped = problems.mapped(error, request: request, context: context)
        return pages.error(mapped as? Problem ?? Problem.internalError(), caller: context.consoleCaller)
    }
}

/// The guard of the console's pages: a session cookie, its admin token still live, the token's role
/// permitting the route's access; for a change, the session's form token and a same-site browser. A
/// browser without a session goes to the sign-in page; every refusal and failure behind this guard
/// is a page with the API's status and code.
struct ConsoleSessionMiddleware: RouterMiddleware {
    typealias Context = GatehouseRequestContext
    let sessions: any ConsoleSessionStore
    let clock: any GatehouseClock
    let access: AdminAccess
    let errors: ConsoleErrorPages

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        do {
            guard let cookie = ConsoleSession.presented(inCookieHeader: request.headers.value(.cookie)) else {
                return ConsolePages.seeOther("/console/sign-in")
            }
            guard let caller = try await admit(cookie) else {
                return ConsolePages.seeOther("/console/sign-in?ended=1", headers: [.setCookie: ConsoleCookie.cleared(context)])
            }
            context.admitted = .console(caller, form: [:])
            context.logger[metadataKey: "actor"] = .string(Actor(kind: .adminToken, name: caller.tokenName).description)
            if access == .write {
                guard caller.role.permits(.write) else {
                    throw DomainError(.adminTokenReadOnly, "This admin token is a viewer's: it reads, and changes nothing.")
                }
                context.admitted = .console(caller, form: try await admittedForm(request, context: context, cookie: cookie))
            }
            return try await next(request, context)
        } catch {
            return errors.page(for: error, request: request, context: context)
        }
    }

    private func admit(_ cookie: String) async throws -> ConsoleCaller? {
        let hash = CredentialDigest.of(cookie)
        let found = try await sessions.consoleSession(withHash: hash)
        let now = clock.now()
        guard case .success(let token) = ConsoleSession.admit(found?.session, token: found?.token, at: now), let session = found?.session
        else { return nil }
        if session.needsTouch(at: now) { try await sessions.touchConsoleSession(withHash: hash, at: now) }
        return ConsoleCaller(tokenName: token.name, role: token.role, csrf: ConsoleForgery.token(forCookie: cookie))
    }

    /// The form's fields, once its token and the browser's own headers say it comes from this site.
    private func admittedForm(_ request: Request, context: Context, cookie: String) async throws -> [String: String] {
        let sameOrigin = ConsoleForm.fromThisSite(request)
        let fields = try await ConsoleForm.read(request, context: context)
        guard sameOrigin, ConsoleForgery.tokenMatches(fields[ConsoleForgery.fieldName], cookie: cookie) else {
            throw DomainError(.consoleFormRefused, "This form did not come from this session's console page. Open the page again and resend.")
        }
        return fields
    }
}
