import GatehouseCore
import HTTPTypes
import Hummingbird

/// Who may call a route. Each audience is a router group that carries its own authentication, so a
/// route is admitted by the group it was registered in, never by a test on the path's spelling.
enum Audience: CaseIterable, Sendable {
    /// Liveness, readiness and metrics, for the orchestrator: never shed, so that an instance under a
    /// flood still says it is alive.
    case probes
    /// The JWKS, the captcha page and siteverify: no credential at this layer.
    case open
    /// The slider's challenges and answers: no credential; refusals in the slider's codes.
    case captcha
    /// STS distribution, OSS signing and presigned URLs, each checking its own attestation token:
    /// no credential at this layer; refusals in the OSS SDKs' shape.
    case sts
    /// `/v1/admin/...` that change something: a bearer admin token with the `admin` role.
    case operators
    /// `/v1/admin/...` that only read: a bearer admin token of either role (`viewer` too).
    case operatorReads
    /// `/console/sign-in`, `/console/sign-out` and the console's assets: no session at this layer (each
    /// checks what it needs), errors rendered as pages.
    case consoleEntry
    /// `/console/...` pages that only read: a console session of either role.
    case console
    /// `/console/...` forms that change something: a console session of an `admin` token, and the
    /// session's form token.
    case consoleChanges
    /// The app's own backend: Basic appKey and server secret in `Authorization`.
    case backend
    /// The gateway in front of the app's API: the app's credential in the one configured header.
    case gateway
    /// The mobile SDK: a request signed with the app's `secretKey`; refusals in the SDK's codes.
    case sdk
}

extension Audience {
    /// Whether a guard admits the audience's callers (the others check what they need in the handler).
    var isGuarded: Bool { ![.probes, .open, .captcha, .sts].contains(self) }
}

/// The routes the server registered, by method and path pattern, so that a path that exists with
/// another method gets 405 and an `Allow` header rather than 404 (Hummingbird's router answers 404),
/// and so that admission can refuse a request in its audience's vocabulary before routing.
final class RouteTable: Sendable {
    private let routes: [(method: String, segments: [Substring], audience: Audience)]
    /// The audiences of the paths without variables, by path then by method: admission asks for
    /// every request, on the event loop, so the common case is one hash lookup.
    private let fixedPaths: [String: [String: Audience]]

    init(_ routes: [(HTTPRequest.Method, String, Audience)]) {
        self.routes = routes.map { ($0.0.rawValue, $0.1.split(separator: "/"), $0.2) }
        var fixedPaths: [String: [String: Audience]] = [:]
        for (method, path, audience) in routes where !path.contains(":") {
            fixedPaths[path, default: [:]][method.rawValue] = audience
        }
        self.fixedPaths = fixedPaths
    }

    func methods(matching path: String) -> [String] {
        var methods: [String] = []
        for route in routes(matching: path.split(separator: "/")) where !methods.contains(route.method) {
            methods.append(route.method)
        }
        return methods
    }

    /// The audience of the route a path in its one spelling names, with this method if one matches;
    /// nil for another spelling (the router refuses it) or a path no route has.
    func audience(of method: HTTPRequest.Method, canonicalPath path: Substring) -> Audience? {
        guard RequestPath.isCanonical(path) else { return nil }
        if let byMethod = fixedPaths[String(path)] { return byMethod[method.rawValue] ?? byMethod.values.first }
        let candidates = routes(matching: path.split(separator: "/"))
        return (candidates.first { $0.method == method.rawValue } ?? candidates.first)?.audience
    }

    private func routes(matching segments: [Substring]) -> [(method: String, segments: [Substring], audience: Audience)] {
        routes.filter { route in
            route.segments.count == segments.count
                && zip(route.segments, segments).allSatisfy { pattern, segment in pattern.hasPrefix(":") || pattern == segment }
        }
    }
}

/// An audience as a route names it, typed by the context its group hands the handler: a handler
/// registered for `.backend` takes a `BackendContext`, and one that took another would not compile.
struct AudienceOf<Context: GatehouseContext>: Sendable {
    let audience: Audience
}

extension AudienceOf where Context == GatehouseRequestContext {
    static var probes: Self { .init(audience: .probes) }
    static var open: Self { .init(audience: .open) }
    static var consoleEntry: Self { .init(audience: .consoleEntry) }
    static var captcha: Self { .init(audience: .captcha) }
    static var sts: Self { .init(audience: .sts) }
}

extension AudienceOf where Context == OperatorContext {
    static var operators: Self { .init(audience: .operators) }
    static var operatorReads: Self { .init(audience: .operatorReads) }
}

extension AudienceOf where Context == BackendContext {
    static var backend: Self { .init(audience: .backend) }
    static var gateway: Self { .init(audience: .gateway) }
}

extension AudienceOf where Context == SDKContext {
    static var sdk: Self { .init(audience: .sdk) }
}

extension AudienceOf where Context == ConsoleContext {
    static var console: Self { .init(audience: .console) }
    static var consoleChanges: Self { .init(audience: .consoleChanges) }
}

/// Collects the controllers' routes with their audience, then installs each audience as a router
/// group behind its guard (Hummingbird applies middleware only to routes added after it), each route
/// in its audience's context (`group(context:)`).
struct RouteRegistrar {
    typealias Handler<Context> = @Sendable (Request, Context) async throws -> Response
    private(set) var recorded:
        [(method: HTTPRequest.Method, path: String, audience: Audience, install: @Sendable (RouterGroup<GatehouseRequestContext>) -> Void)] = []

    mutating func on<Context: AudienceContext>(
        _ method: HTTPRequest.Method,
        _ path: String,
        for audience: AudienceOf<Context>,
        use handler: @escaping Handler<Context>
    ) {
        recorded.append(
            (method, path, audience.audience, { group in group.group(context: Context.self).on(RouterPath(path), method: method, use: handler) })
        )
    }

    mutating func on(
        _ method: HTTPRequest.Method,
        _ path: String,
        for audience: AudienceOf<GatehouseRequestContext>,
        use handler: @escaping Handler<GatehouseRequestContext>
    ) {
        recorded.append((method, path, audience.audience, { group in group.on(RouterPath(path), method: method, use: handler) }))
    }

    var table: RouteTable { RouteTable(recorded.map { ($0.method, $0.path, $0.audience) }) }

    /// `guards` holds the authentication of every audience that has one (`Audience.isGuarded`); a
    /// missing one is a programming error caught at start, not a route left unguarded. `errors` holds
    /// the renderer of each audience that does not answer in problem+json, first in its group so that
    /// it sees what the guard throws too. Load was shed before any of them, on the event loop
    /// (`AdmissionHandler`).
    func install(
        on router: Router<GatehouseRequestContext>,
        errors: [Audience: AudienceErrors],
        guards: [Audience: any MiddlewareProtocol<Request, Response, GatehouseRequestContext>]
    ) {
        for audience in Audience.allCases where recorded.contains(where: { $0.audience == audience }) {
            let group = router.group()
            if let renderer = errors[audience] { group.add(middleware: renderer) }
            if audience.isGuarded {
                guard let guardMiddleware = guards[audience] else { preconditionFailure("no guard for \(audience) routes") }
                group.add(middleware: guardMiddleware)
            }
            for route in recorded where route.audience == audience {
                route.install(group)
            }
        }
    }
}
