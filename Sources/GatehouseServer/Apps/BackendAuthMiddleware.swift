import GatehouseCore
import GatehouseOperations
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
        let presented: (appKey: AppKey, secret: String)
        switch BackendCredentials.presented(inAuthorization: request.headers.value(header)) {
        case .failure(let refusal): throw Self.problem(for: refusal)
        case .success(let found): presented = found
        }
        switch try await apps.admitBackend(appKey: presented.appKey, secret: presented.secret) {
        case .failure(let refusal): throw Self.problem(for: refusal)
        case .success(let admitted):
            var context = context
            context.admitted = .backend(BackendCaller(app: admitted.app, secretVersion: admitted.secretVersion))
            return try await next(request, context)
        }
    }

    static func problem(for refusal: BackendCredentials.Refusal) -> Problem {
        if refusal == .appDisabled {
            return Problem(.forbidden, code: refusal.rawValue, title: "App disabled", detail: refusal.detail)
        }
        return .unauthorized(code: refusal.rawValue, detail: refusal.detail, challenge: #"Basic realm="gatehouse-backend""#)
    }
}
