import GatehouseAPI
import GatehouseCore
import GatehouseOperations
import Hummingbird

/// `/v1/risk/...`: the app backend's risk queries and stored decisions (HTTP Basic, server secret).
struct RiskController {
    typealias Context = BackendContext
    let risk: RiskQueryOperations
    let labels: DecisionLabelOperations

    func register(on routes: inout RouteRegistrar) {
        routes.on(.post, "/v1/risk/query", for: .backend, use: query)
        routes.on(.get, "/v1/risk/decisions/:decisionId", for: .backend, use: decision)
        routes.on(.post, "/v1/risk/decisions/:decisionId/labels", for: .backend, use: label)
    }

    @Sendable func query(_ request: Request, context: Context) async throws -> Response {
        let app = context.app
        let input = try RiskQueryBody.decode(try await JSONBody.collect(request, context: context), contentType: request.headers.value(.contentType))
        let recorded = try await risk.query(
            ztoken: input.ztoken,
            eventID: input.eventID,
            accountID: input.accountID,
            clientIP: input.clientIP,
            userAgent: input.userAgent,
            app: app
        )
        return RiskDecisionJSON.response(recorded.record, appKey: app.appKey, device: recorded.facts.device)
    }

    @Sendable func decision(_ request: Request, context: Context) async throws -> Response {
        let app = context.app
        let record = try await risk.decision(app: app, id: context.parameters.get("decisionId") ?? "")
        return RiskDecisionJSON.response(record, appKey: app.appKey, device: nil)
    }

    /// The backend's label, audited as `app-server:<appKey>`.
    @Sendable func label(_ request: Request, context: Context) async throws -> Response {
        let app = context.app
        let body = try await JSONBody.decode(Components.Schemas.DecisionLabelWrite.self, from: request, context: context)
        let origin = context.base.origin(of: Actor(kind: .appServer, name: app.appKey.rawValue))
        let record = try await labels.label(app, decisionID: context.parameters.get("decisionId") ?? "", .init(body), origin: origin)
        return RiskDecisionJSON.response(record, appKey: app.appKey, device: nil, status: .created)
    }
}

extension DecisionLabelOperations.Input {
    init(_ body: Components.Schemas.DecisionLabelWrite) {
        self.init(label: body.label.rawValue, kind: body.kind.rawValue, note: body.note)
    }
}
