import GatehouseAPI
import GatehouseCore
import GatehouseOperations
import Hummingbird

/// `/v1/risk/...`: the app backend's risk queries and stored decisions (HTTP Basic, server secret).
struct RiskController {
    typealias Context = BackendContext
    let risk: RiskQueryOperations

    func register(on routes: inout RouteRegistrar) {
        routes.on(.post, "/v1/risk/query", for: .backend, use: query)
        routes.on(.get, "/v1/risk/decisions/:decisionId", for: .backend, use: decision)
    }

    @Sendable func query(_ request: Request, context: Context) async throws -> Response {
        let app = context.app
        let input = try RiskQueryBody.decode(try await JSONBody.collect(request, context: context), contentType: request.headers[.contentType])
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
}
