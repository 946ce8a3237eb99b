import GatehouseAPI
import GatehouseCore
import Hummingbird

/// `/v1/risk/...`: the app backend's risk queries and stored decisions (HTTP Basic, server secret).
struct RiskController {
    let risk: RiskOperations

    func register(on routes: inout RouteRegistrar) {
        routes.on(.post, "/v1/risk/query", for: .backend) { request, context in
            let app = try context.backendCaller().app
            let input = try await JSONBody.decode(Components.Schemas.RiskQuery.self, from: request, context: context)
            let outcome = try await risk.query(
                .init(
                    ztoken: input.ztoken,
                    eventID: input.eventId,
                    accountID: input.accountId,
                    clientIP: input.clientIp.value1 ?? input.clientIp.value2 ?? "",
                    userAgent: input.userAgent
                ),
                app: app
            )
            return try JSONBody.response(Components.Schemas.RiskDecisionView(outcome.record, appKey: app.appKey, device: outcome.device))
        }
        routes.on(.get, "/v1/risk/decisions/:decisionId", for: .backend) { request, context in
            let app = try context.backendCaller().app
            let record = try await risk.decision(app: app, id: context.parameters.get("decisionId") ?? "")
            return try JSONBody.response(Components.Schemas.RiskDecisionView(record, appKey: app.appKey, device: nil))
        }
    }
}
