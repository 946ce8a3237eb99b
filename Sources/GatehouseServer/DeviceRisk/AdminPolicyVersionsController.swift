import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseOperations
import Hummingbird

/// `/v1/admin/apps/:appKey/risk/policy-versions...`, `.../risk/replays...` and `.../risk/shadow`: the
/// app's published policies, restoring one, replays of its history with a version or a proposed
/// policy, and a policy run in shadow beside the live one.
struct AdminPolicyVersionsController {
    typealias Context = OperatorContext
    let versions: PolicyVersionOperations
    let replays: ReplayOperations
    let shadows: ShadowOperations

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/v1/admin/apps/:appKey/risk/policy-versions", for: .operatorReads, use: list)
        routes.on(.get, "/v1/admin/apps/:appKey/risk/policy-versions/:version", for: .operatorReads, use: version)
        routes.on(.post, "/v1/admin/apps/:appKey/risk/policy-versions/:version/restore", for: .operators, use: restore)
        routes.on(.get, "/v1/admin/apps/:appKey/risk/replays", for: .operatorReads, use: listReplays)
        routes.on(.post, "/v1/admin/apps/:appKey/risk/replays", for: .operators, use: startReplay)
        routes.on(.get, "/v1/admin/apps/:appKey/risk/replays/:replayId", for: .operatorReads, use: replay)
        routes.on(.get, "/v1/admin/apps/:appKey/risk/replays/:replayId/changes", for: .operatorReads, use: changes)
        routes.on(.post, "/v1/admin/apps/:appKey/risk/replays/:replayId/cancel", for: .operators, use: cancel)
        routes.on(.get, "/v1/admin/apps/:appKey/risk/shadow", for: .operatorReads, use: shadow)
        routes.on(.put, "/v1/admin/apps/:appKey/risk/shadow", for: .operators, use: setShadow)
        routes.on(.delete, "/v1/admin/apps/:appKey/risk/shadow", for: .operators, use: stopShadow)
    }

    @Sendable func shadow(_ request: Request, context: Context) async throws -> Response {
        let shadow = try await shadows.shadow(try Query.appKey(context))
        return try JSONBody.response(
            Components.Schemas.ShadowPolicyState(running: shadow != nil, policy: shadow.map(Components.Schemas.ShadowPolicy.init))
        )
    }

    @Sendable func setShadow(_ request: Request, context: Context) async throws -> Response {
        let body = try await JSONBody.decode(Components.Schemas.ShadowPolicyWrite.self, from: request, context: context)
        let shadow = try await shadows.start(
            try Query.appKey(context),
            version: body.version,
            rules: try ProposedPolicyBody.rules(body.rules?.additionalProperties),
            policyRules: try ProposedPolicyBody.policyRules(body.policyRules),
            origin: context.origin
        )
        return try JSONBody.response(Components.Schemas.ShadowPolicy(shadow))
    }

    @Sendable func stopShadow(_ request: Request, context: Context) async throws -> Response {
        try await shadows.stop(try Query.appKey(context), origin: context.origin)
        return Response(status: .noContent)
    }

    @Sendable func list(_ request: Request, context: Context) async throws -> Response {
        let query = Query.reader(request.uri.queryParameters)
        let limit = try query.int("limit") ?? PageSize.standard.value
        let before = try query.int("before")
        if let before, !(1...Int(Int32.max)).contains(before) {
            throw Problem.badParameter("before", "before is a version number, from 1 to 2147483647.")
        }
        let page = try await versions.versions(try Query.appKey(context), before: before, limit: limit)
        let next = page.count == limit ? page.last?.number : nil
        return try JSONBody.response(
            Components.Schemas.PolicyVersionPage(items: page.map(Components.Schemas.PolicyVersionSummary.init), nextBefore: next)
        )
    }

    @Sendable func version(_ request: Request, context: Context) async throws -> Response {
        let found = try await versions.version(try Query.appKey(context), number: try Self.number(context))
        return try JSONBody.response(Components.Schemas.PolicyVersion(found))
    }

    @Sendable func restore(_ request: Request, context: Context) async throws -> Response {
        let restored = try await versions.restore(try Query.appKey(context), number: try Self.number(context), origin: context.origin)
        return try JSONBody.response(Components.Schemas.PolicyVersion(restored))
    }

    @Sendable func listReplays(_ request: Request, context: Context) async throws -> Response {
        let runs = try await replays.replays(try Query.appKey(context))
        return try JSONBody.response(Components.Schemas.ReplayPage(items: runs.map(Components.Schemas.Replay.init)))
    }

    /// Starts the replay and answers at once; the work goes on in this instance's background.
    @Sendable func startReplay(_ request: Request, context: Context) async throws -> Response {
        let body = try await JSONBody.decode(Components.Schemas.ReplayCreate.self, from: request, context: context)
        let run = try await replays.startInBackground(try Query.appKey(context), try ReplayOperations.Request(body), origin: context.origin)
        return try JSONBody.response(Components.Schemas.Replay(run), status: .accepted)
    }

    @Sendable func replay(_ request: Request, context: Context) async throws -> Response {
        let run = try await replays.replay(try Query.appKey(context), id: context.parameters.get("replayId") ?? "")
        return try JSONBody.response(Components.Schemas.Replay(run))
    }

    @Sendable func changes(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        let query = Query.reader(request.uri.queryParameters)
        let page = try await replays.changes(
            appKey,
            id: context.parameters.get("replayId") ?? "",
            cursor: query.string("cursor"),
            limit: try query.int("limit")
        )
        let items = page.changes.map { Components.Schemas.ReplayChange($0, appKey: appKey) }
        return try JSONBody.response(Components.Schemas.ReplayChanges(items: items, nextCursor: page.next))
    }

    @Sendable func cancel(_ request: Request, context: Context) async throws -> Response {
        let run = try await replays.cancel(try Query.appKey(context), id: context.parameters.get("replayId") ?? "", origin: context.origin)
        return try JSONBody.response(Components.Schemas.Replay(run))
    }

    static func number(_ context: Context) throws -> Int {
        guard let number = try Query.int(context.parameters, "version"), number >= 1 else {
            throw Problem.badParameter("version", "version is a version number, from 1.")
        }
        return number
    }
}
