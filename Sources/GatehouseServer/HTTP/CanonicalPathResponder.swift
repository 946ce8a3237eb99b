import GatehouseCore
import Hummingbird

/// Refuses every request whose path is not in `RequestPath`'s one spelling, before the router reads
/// it, so no route (and no route group's guard) ever sees another spelling of a path.
struct CanonicalPathResponder<Routes: HTTPResponder>: HTTPResponder where Routes.Context == GatehouseRequestContext {
    typealias Context = GatehouseRequestContext
    let routes: Routes

    func respond(to request: Request, context: Context) async throws -> Response {
        guard RequestPath.isCanonical(request.uri.path) else {
            return try Problem(
                .badRequest,
                code: "non_canonical_path",
                title: "Non-canonical path",
                detail: "Paths are '/' and non-empty segments of letters, digits, '-', '.', '_' and '~', without dot segments, "
                    + "percent-escapes or a trailing slash."
            ).response(from: request, context: context)
        }
        return try await routes.respond(to: request, context: context)
    }
}
