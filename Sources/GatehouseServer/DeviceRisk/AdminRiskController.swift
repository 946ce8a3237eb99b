// DeviceRisk: device start, a ztoken per event, and the app backend's risk query that consumes it.
// Serves seed 002 (the device-risk SDK: appKey + secretKey, events 3300-3400, the H5 bridge).

import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseOperations
import Hummingbird

/// `/v1/admin/...` for the device-risk flow: settings, devices, rules, lists, decisions.
struct AdminRiskController {
    typealias Context = OperatorContext
    let risk: RiskAdminOperations
    let labels: DecisionLabelOperations

    func register(on routes: inout RouteRegistrar) {
        routes.on(.patch, "/v1/admin/apps/:appKey/settings", for: .operators, use: updateSettings)
        routes.on(.get, "/v1/admin/apps/:appKey/devices/:deviceId", for: .operatorReads, use: device)
        routes.on(.get, "/v1/admin/apps/:appKey/risk/rules", for: .operatorReads, use: rules)
        routes.on(.put, "/v1/admin/apps/:appKey/risk/rules", for: .operators, use: setAppRules)
        routes.on(.put, "/v1/admin/apps/:appKey/events/:eventId/risk/rules", for: .operators, use: setEventRules)
        routes.on(.post, "/v1/admin/apps/:appKey/risk/lists", for: .operators, use: addListEntry)
        routes.on(.get, "/v1/admin/apps/:appKey/risk/lists", for: .operatorReads, use: listEntries)
        routes.on(.delete, "/v1/admin/apps/:appKey/risk/lists/:entryId", for: .operators, use: removeListEntry)
        routes.on(.get, "/v1/admin/risk/decisions", for: .operatorReads, use: decisions)
        routes.on(.get, "/v1/admin/risk/refused-counts", for: .operatorReads, use: refusedCounts)
        routes.on(.post, "/v1/admin/apps/:appKey/risk/decisions/:decisionId/labels", for: .operators, use: label)
    }

    @Sendable func updateSettings(_ request: Request, context: Context) async throws -> Response {
        let body = try await JSONBody.decode(Components.Schemas.AppSettingsUpdate.self, from: request, context: context)
        let app = try await risk.updateSettings(
            try Query.appKey(context),
            ztokenTTLSeconds: body.ztokenTtlSeconds,
            retentionDays: body.retentionDays,
            origin: context.origin
        )
        return try JSONBody.response(Components.Schemas.App(app))
    }

    @Sendable func device(_ request: Request, context: Context) async throws -> Response {
        let device = try await risk.device(try Query.appKey(context), deviceID: context.parameters.get("deviceId") ?? "")
        return try JSONBody.response(Components.Schemas.DeviceRecord(device))
    }

    @Sendable func rules(_ request: Request, context: Context) async throws -> Response {
        try JSONBody.response(Components.Schemas.RiskRulesView(try await risk.rules(try Query.appKey(context))))
    }

    @Sendable func setAppRules(_ request: Request, context: Context) async throws -> Response {
        try await setRules(request, context, eventID: nil)
    }

    @Sendable func setEventRules(_ request: Request, context: Context) async throws -> Response {
        guard let eventID = try Query.int(context.parameters, "eventId") else {
            throw Problem.badParameter("eventId", "eventId is an integer from 3300 to 3400.")
        }
        return try await setRules(request, context, eventID: eventID)
    }

    @Sendable func addListEntry(_ request: Request, context: Context) async throws -> Response {
        let body = try await JSONBody.decode(Components.Schemas.RiskListEntryCreate.self, from: request, context: context)
        let entry = try await risk.addListEntry(
            try Query.appKey(context),
            list: body.list.rawValue,
            type: body._type.rawValue,
            value: body.value,
            note: body.note,
            origin: context.origin
        )
        return try JSONBody.response(Components.Schemas.RiskListEntry(entry), status: .created)
    }

    @Sendable func listEntries(_ request: Request, context: Context) async throws -> Response {
        let entries = try await risk.listEntries(try Query.appKey(context))
        return try JSONBody.response(Components.Schemas.RiskListEntries(items: entries.map(Components.Schemas.RiskListEntry.init)))
    }

    @Sendable func removeListEntry(_ request: Request, context: Context) async throws -> Response {
        try await risk.removeListEntry(try Query.appKey(context), entryID: context.parameters.get("entryId") ?? "", origin: context.origin)
        return Response(status: .noContent)
    }

    @Sendable func decisions(_ request: Request, context: Context) async throws -> Response {
        let page = try await risk.decisions(try .init(Query.reader(request.uri.queryParameters)))
        return RiskDecisionJSON.page(page.decisions.map { ($0.record, $0.appKey) }, next: page.next)
    }

    @Sendable func refusedCounts(_ request: Request, context: Context) async throws -> Response {
        let page = try await risk.refusedCounts(try .init(Query.reader(request.uri.queryParameters)))
        return try JSONBody.response(
            Components.Schemas.RefusedCountPage(items: page.counts.map(Components.Schemas.RefusedCount.init), nextCursor: page.next)
        )
    }

    /// The explorer's filters from query parameters, for the API and the console alike.
    private func setRules(_ request: Request, _ context: OperatorContext, eventID: Int?) async throws -> Response {
        let body = try await JSONBody.decode(Components.Schemas.RiskRules.self, from: request, context: context)
        let view = try await risk.setRules(
            try Query.appKey(context),
            eventID: eventID,
            rules: RiskRules(body),
            origin: context.origin
        )
        return try JSONBody.response(Components.Schemas.RiskRulesView(view))
    }

    @Sendable func label(_ request: Request, context: Context) async throws -> Response {
        let body = try await JSONBody.decode(Components.Schemas.DecisionLabelWrite.self, from: request, context: context)
        let appKey = try Query.appKey(context)
        let id = context.parameters.get("decisionId") ?? ""
        let record = try await labels.label(appKey, decisionID: id, .init(body), origin: context.origin)
        return RiskDecisionJSON.response(record, appKey: appKey, device: nil, status: .created)
    }
}
