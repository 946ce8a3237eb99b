// STS: roles, temporary credentials from upstream STS services, OSS self-signing, presigned URLs.
// Serves seed 004 (the OSS SDK's STS and self-signed modes and signed URLs).

import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseOperations
import Hummingbird

/// `/v1/admin/apps/{appKey}/roles`: operators' STS roles.
struct AdminSTSController {
    typealias Context = OperatorContext
    let roles: STSRoleOperations

    func register(on routes: inout RouteRegistrar) {
        routes.on(.post, "/v1/admin/apps/:appKey/roles", for: .operators, use: createRole)
        routes.on(.get, "/v1/admin/apps/:appKey/roles", for: .operatorReads, use: listRoles)
        routes.on(.get, "/v1/admin/apps/:appKey/roles/:roleId", for: .operatorReads, use: role)
        routes.on(.patch, "/v1/admin/apps/:appKey/roles/:roleId", for: .operators, use: updateRole)
    }

    @Sendable func createRole(_ request: Request, context: Context) async throws -> Response {
        let body = try await JSONBody.decode(Components.Schemas.RoleCreate.self, from: request, context: context)
        let appKey = try Query.appKey(context)
        let key = try RoleChange.key(body)
        let role = try await roles.createRole(
            appKey,
            roleID: try RoleID(validating: body.roleId),
            change: RoleChange(body),
            key: key,
            origin: context.origin
        )
        return try JSONBody.response(Components.Schemas.Role(role, appKey: appKey), status: .created)
    }

    @Sendable func listRoles(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        let list = try await roles.roles(appKey)
        return try JSONBody.response(Components.Schemas.RoleList(items: list.map { .init($0, appKey: appKey) }))
    }

    @Sendable func role(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        let role = try await roles.role(appKey, roleID: try RoleID(validating: context.parameters.get("roleId") ?? ""))
        return try JSONBody.response(Components.Schemas.Role(role, appKey: appKey))
    }

    @Sendable func updateRole(_ request: Request, context: Context) async throws -> Response {
        let body = try await JSONBody.decode(Components.Schemas.RoleUpdate.self, from: request, context: context)
        let appKey = try Query.appKey(context)
        var change = RoleChange(body)
        change.status = body.status?.rawValue
        let role = try await roles.updateRole(
            appKey,
            roleID: try RoleID(validating: context.parameters.get("roleId") ?? ""),
            change: change,
            key: try RoleChange.key(body),
            origin: context.origin
        )
        return try JSONBody.response(Components.Schemas.Role(role, appKey: appKey))
    }
}
