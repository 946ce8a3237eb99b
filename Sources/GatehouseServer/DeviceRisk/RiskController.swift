import GatehouseAPI
import GatehouseCore
import Hummingbird

/// `/v1/risk/...`: the app backend's risk queries and stored decisions (HTTP Basic, server secret).
struct RiskController {
    typealias Context = GatehouseRequestContext
    let risk: RiskQueryOperations

    func register(on routes: inout RouteRegistrar) {
        routes.on(.post, "/v1/risk/query", for: .backend, use: query)
        routes.on(.get, "/v1/risk/decisions/:decisionId", for: .backend, use: decision)
    }

    @Sendable func query(_ request: Request, context: Context) async throws -> Response {
        let app = try context.backendCaller().app
        let input = try await JSONBody.decode(Components.Schemas.RiskQuery.self, from: request, context: context)
        let recorded = try await risk.query(
            ztoken: input.ztoken,
            eventID: input.eventId,
            accountID: input.accountId,
            clientIP: input.clientIp.value1 ?? input.clientIp.value2 ?? "",
            userAgent: input.userAgent,
            app: app
        )
        return try JSONBody.response(Components.Schemas.RiskDecisionView(recorded.record, appKey: app.appKey, device: recorded.facts.device))
    }

    @Sendable func decision(_ request: Request, context: Context) async throws -> Response {
        let app = try context.backendCaller().app
        let record = try await risk.decision(app: app, id: context.parameters.get("decisionId") ?? "")
        return try JSONBody.response(Components.Schemas.RiskDecisionView(record, appKey: app.appKey, device: nil))
    }
}
