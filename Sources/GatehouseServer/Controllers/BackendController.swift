import GatehouseAPI
import Hummingbird

/// `/v1/backend/...`: what the app's own backend calls with its appKey and server secret.
struct BackendController {
    let operations: AppOperations

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/v1/backend/whoami") { request, _ in
            let identity = try await operations.authenticateBackend(authorization: request.headers[.authorization])
            return try JSONBody.response(Components.Schemas.BackendIdentity(app: .init(identity.app), secretVersion: identity.secretVersion))
        }
    }
}
