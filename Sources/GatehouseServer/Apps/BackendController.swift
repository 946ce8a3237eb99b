import GatehouseAPI
import Hummingbird

/// `/v1/backend/...`: what the app's own backend calls with its appKey and server secret.
struct BackendController {
    typealias Context = BackendContext

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/v1/backend/whoami", for: .backend, use: whoami)
    }

    @Sendable func whoami(_ request: Request, context: Context) async throws -> Response {
        let identity = context.caller
        return try JSONBody.response(Components.Schemas.BackendIdentity(app: .init(identity.app), secretVersion: identity.secretVersion))
    }
}
