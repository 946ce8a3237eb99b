import GatehouseCore
import HTTPTypes
import Hummingbird

/// The app whose backend (or gateway) credential admitted a request, and the secret version that matched.
struct BackendCaller: Sendable {
    let app: App
    let secretVersion: Int
}

/// The guard of the backend's and the gateway's routes: the app's Basic credential (appKey and server
/// secret), read from exactly one header. Backends send it in `Authorization`; the gateway sends it in
/// the header the operator configured (`GATEHOUSE_GATE_CREDENTIAL_HEADER`), and no other header is
/// consulted, so a client cannot put a credential of its own beside the one the proxy sets.
struct BackendAuthMiddleware: RouterMiddleware {
    typealias Context = GatehouseRequestContext

    let apps: AppOperations
    let header: HTTPField.Name

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let admitted = try await apps.authenticateBackend(authorization: request.headers[header])
        var context = context
        context.backend = BackendCaller(app: admitted.app, secretVersion: admitted.secretVersion)
        return try await next(request, context)
    }
}
