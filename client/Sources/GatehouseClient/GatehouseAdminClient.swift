import Foundation
@_exported import GatehouseAPI
import OpenAPIRuntime

#if canImport(FoundationNetworking)
import OpenAPIAsyncHTTPClient

/// The generated client's transport on this platform.
@usableFromInline func defaultTransport() -> any ClientTransport { AsyncHTTPClientTransport() }
#else
import OpenAPIURLSession

/// The generated client's transport on this platform.
@usableFromInline func defaultTransport() -> any ClientTransport { URLSessionTransport() }
#endif

/// An operator's client for the admin API: apps, keys, events, audit. Wraps the generated client.
public struct GatehouseAdminClient: Sendable {
    let client: Client

    /// An operator's client; `adminToken` is a token from `gatehouse admin-token create`.
    public init(serverURL: URL, adminToken: String, transport: any ClientTransport = defaultTransport()) {
        client = Client(
            serverURL: serverURL,
            transport: transport,
            middlewares: [AuthorizationMiddleware(value: "Bearer \(adminToken)"), ProblemMiddleware()]
        )
    }

    /// Registers an app; the answer carries its SDK secret and server secret, shown only this once.
    public func createApp(name: String, platforms: [Components.Schemas.Platform]) async throws -> Components.Schemas.AppCreated {
        try await unwrapping { try await client.createApp(body: .json(.init(name: name, platforms: platforms))).created.body.json }
    }

    /// One page of apps in appKey order; pass the page's cursor as `after` for the next.
    public func listApps(after: String? = nil, limit: Int? = nil) async throws -> Components.Schemas.AppPage {
        try await unwrapping { try await client.listApps(query: .init(limit: limit, after: after)).ok.body.json }
    }

    /// One app with its secrets' versions (never the secrets).
    public func app(_ appKey: String) async throws -> Components.Schemas.AppDetails {
        try await unwrapping { try await client.getApp(path: .init(appKey: appKey)).ok.body.json }
    }

    /// Stops the app's SDK and backend calls until it is enabled again.
    public func disableApp(_ appKey: String) async throws -> Components.Schemas.App {
        try await unwrapping { try await client.disableApp(path: .init(appKey: appKey)).ok.body.json }
    }

    /// Lets a disabled app's calls in again.
    public func enableApp(_ appKey: String) async throws -> Components.Schemas.App {
        try await unwrapping { try await client.enableApp(path: .init(appKey: appKey)).ok.body.json }
    }

    /// Issues a new SDK or server secret; the previous one keeps working through the overlap window.
    public func rotateSecret(
        _ appKey: String,
        kind: Components.Schemas.SecretKind,
        overlapSeconds: Int? = nil
    ) async throws -> Components.Schemas.RotatedSecret {
        try await unwrapping {
            try await client.rotateAppSecret(
                path: .init(appKey: appKey, kind: kind),
                body: .json(.init(overlapSeconds: overlapSeconds))
            ).ok.body.json
        }
    }

    /// Registers an event id (3300...3400) the app's ztokens may name.
    public func registerEvent(_ appKey: String, eventID: Int, name: String) async throws -> Components.Schemas.Event {
        try await unwrapping {
            try await client.registerEvent(path: .init(appKey: appKey), body: .json(.init(eventId: eventID, name: name))).created.body.json
        }
    }

    /// The app's registered events.
    public func events(_ appKey: String) async throws -> [Components.Schemas.Event] {
        try await unwrapping { try await client.listEvents(path: .init(appKey: appKey)).ok.body.json.items }
    }

    /// One page of the audit log, newest first, optionally for one app.
    /// One page of the audit log, newest first; each filter given narrows it (docs/api.md).
    public func auditEntries(
        before: Int64? = nil,
        appKey: String? = nil,
        action: String? = nil,
        actor: String? = nil,
        from: Date? = nil,
        to: Date? = nil,
        limit: Int? = nil
    ) async throws -> Components.Schemas.AuditPage {
        try await unwrapping {
            try await client.listAuditEntries(
                query: .init(limit: limit, before: before, appKey: appKey, action: action, actor: actor, from: from, to: to)
            ).ok.body.json
        }
    }
}

/// The app backend's client: appKey and server secret as HTTP Basic.
public struct GatehouseBackendClient: Sendable {
    let client: Client

    /// The backend's client, authenticated with the app's key and server secret.
    public init(serverURL: URL, appKey: String, serverSecret: String, transport: any ClientTransport = defaultTransport()) {
        let credential = Data("\(appKey):\(serverSecret)".utf8).base64EncodedString()
        client = Client(
            serverURL: serverURL,
            transport: transport,
            middlewares: [AuthorizationMiddleware(value: "Basic \(credential)"), ProblemMiddleware()]
        )
    }

    /// Checks the credential; returns the app and which server secret version matched.
    public func whoami() async throws -> Components.Schemas.BackendIdentity {
        try await unwrapping { try await client.backendWhoami().ok.body.json }
    }

    /// Judges (and consumes) a ztoken the app sent with a protected request.
    public func queryRisk(
        ztoken: String,
        eventID: Int,
        accountID: String,
        clientIP: String,
        userAgent: String? = nil
    ) async throws -> Components.Schemas.RiskDecisionView {
        let body = Components.Schemas.RiskQuery(
            ztoken: ztoken,
            eventId: eventID,
            accountId: accountID,
            clientIp: .init(value1: clientIP),
            userAgent: userAgent
        )
        return try await unwrapping { try await client.queryRisk(body: .json(body)).ok.body.json }
    }

    /// A decision stored earlier for this app.
    public func decision(_ id: String) async throws -> Components.Schemas.RiskDecisionView {
        try await unwrapping { try await client.getRiskDecision(path: .init(decisionId: id)).ok.body.json }
    }
}
