// Apps: apps with their appKey, the SDK's secretKey and the backend's server secret, and their events.
// Serves every seed: the appKey and secretKey of 000 and 002, the app backend's credential for all of them.

import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseOperations
import Hummingbird

/// `/v1/admin/apps...`: apps, their secrets and events. Handlers translate HTTP to operations and back.
struct AdminAppsController {
    typealias Context = OperatorContext
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
            origin: context.origin
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
            Components.Schemas.App(try await operations.setStatus(try Query.appKey(context), to: .disabled, origin: context.origin))
        )
    }

    @Sendable func enableApp(_ request: Request, context: Context) async throws -> Response {
        try JSONBody.response(
            Components.Schemas.App(try await operations.setStatus(try Query.appKey(context), to: .active, origin: context.origin))
        )
    }

    @Sendable func rotateSecret(_ request: Request, context: Context) async throws -> Response {
        let body = try await JSONBody.decode(
            Components.Schemas.RotateSecretRequest.self,
            from: request,
            context: context,
            whenEmpty: .init()
        )
        let kind = try SecretKind(validating: context.parameters.get("kind") ?? "")
        let rotated = try await operations.rotate(
            try Query.appKey(context),
            kind: kind,
            overlapSeconds: body.overlapSeconds,
            origin: context.origin
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
            origin: context.origin
        )
        return try JSONBody.response(Components.Schemas.Event(event), status: .created)
    }

    @Sendable func events(_ request: Request, context: Context) async throws -> Response {
        let events = try await operations.events(try Query.appKey(context))
        return try JSONBody.response(Components.Schemas.EventList(items: events.map(Components.Schemas.Event.init)))
    }

    @Sendable func audit(_ request: Request, context: Context) async throws -> Response {
        let page = try await operations.audit(try .init(Query.reader(request.uri.queryParameters)))
        return try JSONBody.response(
            Components.Schemas.AuditPage(items: try page.records.map(Components.Schemas.AuditEntry.init), nextBefore: page.nextBefore)
        )
    }
}

/// Reading path and query parameters, with a 400 problem for anything unreadable.
enum Query {
    /// The request's query parameters (or a console form's fields) for the query types to read.
    static func reader(_ parameters: Parameters) -> QueryParameters {
        QueryParameters { parameters.get($0) }
    }

    static func int(_ query: Parameters, _ name: String) throws -> Int? {
        try reader(query).int(name)
    }

    static func date(_ query: Parameters, _ name: String) throws -> Date? {
        try reader(query).date(name)
    }

    static func appKey(_ context: some RequestContext) throws -> AppKey {
        guard let appKey = context.parameters.get("appKey") else { throw Problem.badParameter("appKey", "appKey is missing.") }
        return try AppKey(validating: appKey)
    }
}
