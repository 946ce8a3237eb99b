import HTTPTypes
import Hummingbird

/// Who may call a route. Each audience is a router group that carries its own authentication, so a
/// route is admitted by the group it was registered in, never by a test on the path's spelling.
enum Audience: CaseIterable, Sendable {
    /// Liveness, readiness and metrics, for the orchestrator: never shed, so that an instance under a
    /// flood still says it is alive.
    case probes
    /// The JWKS, the captcha page and its API, STS distribution (which checks its own attestation
    /// token): no credential at this layer.
    case open
    /// `/v1/admin/...`: a bearer admin token.
    case operators
    /// The app's own backend: Basic appKey and server secret in `Authorization`.
    case backend
    /// The gateway in front of the app's API: the app's credential in the one configured header.
    case gateway
    /// The mobile SDK: a request signed with the app's `secretKey`; refusals in the SDK's codes.
    case sdk
}

/// The routes the server registered, by method and path pattern, so that a path that exists with
/// another method gets 405 and an `Allow` header rather than 404 (Hummingbird's router answers 404).
final class RouteTable: Sendable {
    private let routes: [(method: String, segments: [Substring])]

    init(_ routes: [(HTTPRequest.Method, String)]) {
        self.routes = routes.map { ($0.0.rawValue, $0.1.split(separator: "/")) }
    }

    func methods(matching path: String) -> [String] {
        let segments = path.split(separator: "/")
        var methods: [String] = []
        for route in routes where route.segments.count == segments.count {
            let matches = zip(route.segments, segments).allSatisfy { pattern, segment in
                pattern.hasPrefix(":") || pattern == segment
            }
            if matches && !methods.contains(route.method) { methods.append(route.method) }
        }
        return methods
    }
}

/// Collects the controllers' routes with their audience, then installs each audience as a router
/// group behind its guard (Hummingbird applies middleware only to routes added after it).
struct RouteRegistrar {
    typealias Context = GatehouseRequestContext
    typealias Handler = @Sendable (Request, Context) async throws -> Response
    private(set) var recorded: [(method: HTTPRequest.Method, path: String, audience: Audience, handler: Handler)] = []

    mutating func on(_ method: HTTPRequest.Method, _ path: String, for audience: Audience, use handler: @escaping Handler) {
        recorded.append((method, path, audience, handler))
    }

    var table: RouteTable { RouteTable(recorded.map { ($0.method, $0.path) }) }

    /// `guards` holds the authentication of every audience but `.open` and `.probes`; a missing one
    /// is a programming error caught at start, not a route left unguarded. Every group but the
    /// probes sheds load first, before its guard spends anything.
    func install(on router: Router<Context>, guards: [Audience: any MiddlewareProtocol<Request, Response, Context>], limit: InFlightLimit) {
        for audience in Audience.allCases {
            let group = router.group()
            if audience != .probes { group.add(middleware: SheddingMiddleware(limit: limit, audience: audience)) }
            if audience != .open && audience != .probes {
                guard let guardMiddleware = guards[audience] else { preconditionFailure("no guard for \(audience) routes") }
                group.add(middleware: guardMiddleware)
            }
            for route in recorded where route.audience == audience {
                group.on(RouterPath(route.path), method: route.method, use: route.handler)
            }
        }
    }
}
