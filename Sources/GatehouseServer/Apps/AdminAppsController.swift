// Apps: apps with their appKey, the SDK's secretKey and the backend's server secret, and their events.
// Serves every seed: the appKey and secretKey of 000 and 002, the app backend's credential for all of them.

import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseOperations
import Hummingbird

/// `/v1/admin/apps...`: apps, their secrets and events. Handlers translate HTTP to operations and back.
struct AdminAppsController {
    typealias Context = GatehouseRequestContext
    let operations: AppOperations
    let clock: any GatehouseClock

    func register(on routes: inout RouteRegistrar) {
        routes.on(.post, "/v1/admin/apps", for: .operators, use: createApp)
        routes.on(.get, "/v1/admin/apps", for: .operatorReads, use: listApps)
        routes.on(.get, "/v1/admin/apps/:appKey", for: .operatorReads, use: app)
        routes.on(.post, "/v1/admin/apps/:appKey/disable", for: .operators, use: disableApp)
        routes.on(.post, "/v1/admin/apps/:appKey/enable", for: .operators, use: enableApp)
        routes.on(.post, "/v1/admin/apps/:appKey/secrets/:kind/rotate", for: .operators, use: rotateSecret)
        routes.on(.post, "/v1/admin/apps/:appKey/events", for: .operators, use: registerEvent)
        routes.on(.get, "/v1/admin/apps/:appKey/events", for: .operatorReads, use: events)
        routes.on(.get, "/v1/admin/audit", for: .operatorReads, use: audit)
    }

    @Sendable func createApp(_ request: Request, context: Context) async throws -> Response {
        let body = try await JSONBody.decode(Components.Schemas.AppCreateRequest.self, from: request, context: context)
        let created = try await operations.create(
            name: body.name,
            platforms: body.platforms.map(\.rawValue),
            origin: try context.origin()
        )
        let response = Components.Schemas.AppCreated(
            app: .init(created.app),
            secretKey: created.secretKey,
            serverSecret: created.serverSecret
        )
        return try JSONBody.response(response, status: .created)
    }

    @Sendable func listApps(_ request: Request, context: Context) async throws -> Response {
        let query = request.uri.queryParameters
        let page = try await operations.list(after: query.get("after"), limit: try Query.int(query, "limit"))
        return try JSONBody.response(
            Components.Schemas.AppPage(items: page.apps.map(Components.Schemas.App.init), nextAfter: page.nextAfter?.rawValue)
        )
    }

    @Sendable func app(_ request: Request, context: Context) async throws -> Response {
        let view = try await operations.view(try Query.appKey(context))
        let now = clock.now()
        return try JSONBody.response(
            Components.Schemas.AppDetails(
                app: .init(view.app),
                secrets: view.secrets.map { .init($0, now: now) },
                events: view.events.map(Components.Schemas.Event.init)
            )
        )
    }

    @Sendable func disableApp(_ request: Request, context: Context) async throws -> Response {
        try JSONBody.response(
            Components.Schemas.App(try await operations.setStatus(try Query.appKey(context), to: .disabled, origin: try context.origin()))
        )
    }

    @Sendable func enableApp(_ request: Request, context: Context) async throws -> Response {
        try JSONBody.response(
            Components.Schemas.App(try await operations.setStatus(try Query.appKey(context), to: .active, origin: try context.origin()))
        )
    }

    @Sendable func rotateSecret(_ request: Request, context: Context) async throws -> Response {
        let body = try await JSONBody.decode(
            Components.Schemas.RotateSecretRequest.self,
            from: request,
            context: context,
            whenEmpty: .init()
        )
        let rotated = try await operations.rotate(
            try Query.appKey(context),
            kind: context.parameters.get("kind") ?? "",
            overlapSeconds: body.overlapSeconds,
            origin: try context.origin()
        )
        return try JSONBody.response(
            Components.Schemas.RotatedSecret(
                kind: .init(rotated.secret.stored.kind),
                version: rotated.secret.stored.version,
                secret: rotated.secret.plaintext,
                previousRetiresAt: rotated.previousRetiresAt
            )
        )
    }

    @Sendable func registerEvent(_ request: Request, context: Context) async throws -> Response {
        let body = try await JSONBody.decode(Components.Schemas.EventCreateRequest.self, from: request, context: context)
        let event = try await operations.registerEvent(
            try Query.appKey(context),
            eventID: body.eventId,
            name: body.name,
            origin: try context.origin()
        )
        return try JSONBody.response(Components.Schemas.Event(event), status: .created)
    }

    @Sendable func events(_ request: Request, context: Context) async throws -> Response {
        let events = try await operations.events(try Query.appKey(context))
        return try JSONBody.response(Components.Schemas.EventList(items: events.map(Components.Schemas.Event.init)))
    }

    @Sendable func audit(_ request: Request, context: Context) async throws -> Response {
        let page = try await operations.audit(try Self.auditQuery(request.uri.queryParameters))
        return try JSONBody.response(
            Components.Schemas.AuditPage(items: try page.records.map(Components.Schemas.AuditEntry.init), nextBefore: page.nextBefore)
        )
    }

    /// The audit log's filters from query parameters, for the API and the console alike.
    static func auditQuery(_ parameters: Parameters) throws -> AppOperations.AuditQuery {
        var query = AppOperations.AuditQuery()
        query.before = try Query.int(parameters, "before").map(Int64.init)
        if let before = query.before, before < 1 { throw Problem.badParameter("before", "before is a sequence number, 1 or more.") }
        query.appKey = parameters.get("appKey")
        query.action = parameters.get("action")
        query.actor = parameters.get("actor")
        query.from = try Query.date(parameters, "from")
        query.to = try Query.date(parameters, "to")
        query.limit = try Query.int(parameters, "limit")
        return query
    }
}

/// Reading path and query parameters, with a 400 problem for anything unreadable.
enum Query {
    /// JSON Schema counts `3364.0` as the integer 3364, and contract tools send it that way, so a zero
    /// fraction is read too; anything else that is not plain digits is refused.
    static func int(_ query: Parameters, _ name: String) throws -> Int? {
        guard let text = query.get(name) else { return nil }
        let parts = text.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        let zeroFraction = parts.count == 1 || (!parts[1].isEmpty && parts[1].allSatisfy { $0 == "0" })
        guard zeroFraction, let value = Int(parts[0]) else { throw Problem.badParameter(name, "\(name) must be an integer.") }
        return value
    }

    /// An RFC 3339 time such as `2026-11-22T10:00:00Z`.
    static func date(_ query: Parameters, _ name: String) throws -> Date? {
        guard let text = query.get(name) else { return nil }
        guard let date = RFC3339.parse(text) else {
            throw Problem.badParameter(name, "\(name) is an RFC 3339 time such as 2026-11-22T10:00:00Z.")
        }
        return date
    }

    static func appKey(_ context: GatehouseRequestContext) throws -> String {
        guard let appKey = context.parameters.get("appKey") else { throw Problem.badParameter("appKey", "appKey is missing.") }
        return appKey
    }
}
