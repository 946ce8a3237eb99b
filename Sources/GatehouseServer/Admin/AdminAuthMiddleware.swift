// Admin: operators' admin tokens, the append-only audit log and the master key.
// Serves the operators of every seed's server half; no SDK calls it.

import GatehouseCore
import GatehouseStore
import HTTPTypes
import Hummingbird

/// The guard of the operators' routes (`/v1/admin/...`): a bearer admin token, found by its SHA-256.
/// A refusal is a 401 whose `code` says why (missing, malformed, unknown, revoked); a viewer's token
/// on a route that changes something is a 403 (`admin_token_read_only`).
struct AdminAuthMiddleware: RouterMiddleware {
    typealias Context = GatehouseRequestContext
    static let challenge = #"Bearer realm="gatehouse-admin""#

    let tokens: any AdminTokenStore
    let clock: any GatehouseClock
    /// What the routes behind this guard do: the token's role must permit it.
    let access: AdminAccess

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let admitted = try await admit(request.headers.value(.authorization))
        switch admitted {
        case .success(let token):
            guard token.role.permits(access) else {
                throw DomainError(.adminTokenReadOnly, "This admin token is a viewer's: it reads, and changes nothing.")
            }
            var context = context
            let actor = Actor(kind: .adminToken, name: token.name)
            context.admitted = .operator(actor)
            context.logger[metadataKey: "actor"] = .string(actor.description)
            return try await next(request, context)
        case .failure(let refusal):
            throw Problem.unauthorized(code: refusal.rawValue, detail: refusal.detail, challenge: Self.challenge)
        }
    }

    private func admit(_ header: String?) async throws -> Result<AdminToken, AdminToken.Refusal> {
        switch AdminToken.presented(inAuthorization: header) {
        case .failure(let refusal): return .failure(refusal)
        case .success(let token):
            let record = try await tokens.adminToken(withHash: CredentialDigest.of(token))
            return AdminToken.admit(record, at: clock.now())
        }
    }
}
