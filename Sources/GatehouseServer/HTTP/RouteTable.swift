import HTTPTypes
import Hummingbird

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

/// Collects the controllers' routes, then installs them after the middleware (Hummingbird applies
/// router middleware only to routes added after it) and describes them for the route table.
struct RouteRegistrar {
    typealias Handler = @Sendable (Request, GatehouseRequestContext) async throws -> Response
    private(set) var recorded: [(method: HTTPRequest.Method, path: String, handler: Handler)] = []

    mutating func on(_ method: HTTPRequest.Method, _ path: String, use handler: @escaping Handler) {
        recorded.append((method, path, handler))
    }

    var table: RouteTable { RouteTable(recorded.map { ($0.method, $0.path) }) }

    func install(on router: Router<GatehouseRequestContext>) {
        for route in recorded {
            router.on(RouterPath(route.path), method: route.method, use: route.handler)
        }
    }
}
