import Foundation
import GatehouseAPI
import GatehouseCore
import Hummingbird

/// `/v1/admin/...` for the device-risk flow: settings, devices, rules, lists, decisions.
struct AdminRiskController {
    let risk: RiskOperations

    func register(on routes: inout RouteRegistrar) {
        routes.on(.patch, "/v1/admin/apps/:appKey/settings", for: .operators) { request, context in
            let body = try await JSONBody.decode(Components.Schemas.AppSettingsUpdate.self, from: request, context: context)
            let app = try await risk.updateSettings(
                try Query.appKey(context),
                ztokenTTLSeconds: body.ztokenTtlSeconds,
                retentionDays: body.retentionDays,
                origin: try context.origin()
            )
            return try JSONBody.response(Components.Schemas.App(app))
        }
        routes.on(.get, "/v1/admin/apps/:appKey/devices/:deviceId", for: .operators) { _, context in
            let device = try await risk.device(try Query.appKey(context), deviceID: context.parameters.get("deviceId") ?? "")
            return try JSONBody.response(Components.Schemas.DeviceRecord(device))
        }
        routes.on(.get, "/v1/admin/apps/:appKey/risk/rules", for: .operators) { _, context in
            try JSONBody.response(try Components.Schemas.RiskRulesView(try await risk.rules(try Query.appKey(context))))
        }
        routes.on(.put, "/v1/admin/apps/:appKey/risk/rules", for: .operators) { request, context in
            try await setRules(request, context, eventID: nil)
        }
        routes.on(.put, "/v1/admin/apps/:appKey/events/:eventId/risk/rules", for: .operators) { request, context in
            guard let eventID = try Query.int(context.parameters, "eventId") else {
                throw Problem.badParameter("eventId", "eventId is an integer from 3300 to 3400.")
            }
            return try await setRules(request, context, eventID: eventID)
        }
        routes.on(.post, "/v1/admin/apps/:appKey/risk/lists", for: .operators) { request, context in
            let body = try await JSONBody.decode(Components.Schemas.RiskListEntryCreate.self, from: request, context: context)
            let entry = try await risk.addListEntry(
                try Query.appKey(context),
                list: body.list.rawValue,
                type: body._type.rawValue,
                value: body.value,
                note: body.note,
                origin: try context.origin()
            )
            return try JSONBody.response(Components.Schemas.RiskListEntry(entry), status: .created)
        }
        routes.on(.get, "/v1/admin/apps/:appKey/risk/lists", for: .operators) { _, context in
            let entries = try await risk.listEntries(try Query.appKey(context))
            return try JSONBody.response(Components.Schemas.RiskListEntries(items: entries.map(Components.Schemas.RiskListEntry.init)))
        }
        routes.on(.delete, "/v1/admin/apps/:appKey/risk/lists/:entryId", for: .operators) { _, context in
            try await risk.removeListEntry(try Query.appKey(context), entryID: context.parameters.get("entryId") ?? "", origin: try context.origin())
            return Response(status: .noContent)
        }
        routes.on(.get, "/v1/admin/risk/decisions", for: .operators) { request, _ in
            let parameters = request.uri.queryParameters
            var query = RiskOperations.DecisionQuery()
            query.appKey = parameters.get("appKey")
            query.eventID = try Query.int(parameters, "eventId")
            query.deviceID = parameters.get("deviceId")
            query.accountID = parameters.get("accountId")
            query.decision = parameters.get("decision")
            query.from = try Query.date(parameters, "from")
            query.to = try Query.date(parameters, "to")
            query.cursor = parameters.get("cursor")
            query.limit = try Query.int(parameters, "limit")
            let page = try await risk.decisions(query)
            return try JSONBody.response(
                Components.Schemas.RiskDecisionPage(
                    items: page.decisions.map { .init($0.record, appKey: $0.appKey, device: nil) },
                    nextCursor: page.next
                )
            )
        }
    }

    private func setRules(_ request: Request, _ context: GatehouseRequestContext, eventID: Int?) async throws -> Response {
        let body = try await JSONBody.decode(Components.Schemas.RiskRules.self, from: request, context: context)
        let view = try await risk.setRules(
            try Query.appKey(context),
            eventID: eventID,
            rules: try JSONShape.convert(body, to: RiskRules.self),
            origin: try context.origin()
        )
        return try JSONBody.response(try Components.Schemas.RiskRulesView(view))
    }
}
