import Foundation
import GatehouseCore
import GatehouseOperations
import Hummingbird

/// `/console/apps/:appKey/roles...`: STS roles (the upstream key goes in once and is sealed; no page
/// shows it again) and `/console/signing-keys`: the attestation token keys and their rotation.
struct ConsoleRolesController {
    typealias Context = ConsoleContext
    let pages: ConsolePages
    let roles: STSRoleOperations
    let keys: SigningKeyRing

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/console/apps/:appKey/roles", for: .console, use: list)
        routes.on(.post, "/console/apps/:appKey/roles", for: .consoleChanges, use: create)
        routes.on(.get, "/console/apps/:appKey/roles/:roleId", for: .console, use: role)
        routes.on(.post, "/console/apps/:appKey/roles/:roleId", for: .consoleChanges, use: update)
        routes.on(.get, "/console/signing-keys", for: .console, use: signingKeys)
        routes.on(.post, "/console/signing-keys/rotate", for: .consoleChanges, use: rotateSigningKey)
    }

    @Sendable func list(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        let rows: [[String: Any]] = try await roles.roles(appKey).map { role in
            [
                "roleId": role.roleID.rawValue, "provider": role.provider.rawValue, "status": role.status.rawValue,
                "attestId": role.attestID.rawValue,
                "duration": role.durationSeconds,
            ]
        }
        return pages.page(
            "roles",
            ["title": "STS roles of \(appKey)", "appKey": appKey.rawValue, "roles": rows, "providers": STSProvider.allCases.map(\.rawValue)],
            caller: context.console
        )
    }

    @Sendable func create(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        let form = context.form
        var change = RoleChange()
        change.provider = ConsoleForm.optional(form, "provider")
        change.stsEndpoint = ConsoleForm.optional(form, "stsEndpoint")
        change.region = ConsoleForm.optional(form, "region")
        change.roleArn = ConsoleForm.optional(form, "roleArn")
        change.attestID = ConsoleForm.optional(form, "attestId")
        change.durationSeconds = try ConsoleForm.int(form, "durationSeconds")
        change.policyTemplate = ConsoleForm.optional(form, "policyTemplate")
        change.storageEndpoint = ConsoleForm.optional(form, "storageEndpoint")
        let key = try UpstreamKey(accessKeyID: form["accessKeyId"] ?? "", accessKeySecret: form["accessKeySecret"] ?? "")
        let role = try await roles.createRole(
            appKey,
            roleID: try RoleID(validating: form["roleId"] ?? ""),
            change: change,
            key: key,
            origin: context.origin
        )
        return ConsolePages.seeOther("/console/apps/\(appKey)/roles/\(role.roleID.rawValue)")
    }

    @Sendable func role(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        let role = try await roles.role(appKey, roleID: try RoleID(validating: context.parameters.get("roleId") ?? ""))
        let settings: [[String: Any]] = role.snapshot.keys.sorted().map { ["name": $0, "value": ConsoleText.value(role.snapshot[$0]!)] }
        return pages.page(
            "role",
            [
                "title": "STS role \(role.roleID.rawValue)", "appKey": appKey.rawValue, "roleId": role.roleID.rawValue,
                "active": role.status == .active,
                "settings": settings, "duration": role.durationSeconds,
            ],
            caller: context.console
        )
    }

    @Sendable func update(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        var change = RoleChange()
        change.status = ConsoleForm.optional(context.form, "status")
        change.durationSeconds = try ConsoleForm.int(context.form, "durationSeconds")
        let role = try await roles.updateRole(
            appKey,
            roleID: try RoleID(validating: context.parameters.get("roleId") ?? ""),
            change: change,
            key: nil,
            origin: context.origin
        )
        return ConsolePages.seeOther("/console/apps/\(appKey)/roles/\(role.roleID.rawValue)")
    }

    @Sendable func signingKeys(_ request: Request, context: Context) async throws -> Response {
        let rows: [[String: Any]] = try await keys.all().map { key in
            [
                "kid": key.kid, "createdAt": ConsoleText.time(key.createdAt),
                "state": key.retiredAt.map { "retired \(ConsoleText.time($0))" } ?? "active",
            ]
        }
        return pages.page("signing-keys", ["title": "Signing keys", "keys": rows], caller: context.console)
    }

    @Sendable func rotateSigningKey(_ request: Request, context: Context) async throws -> Response {
        _ = try await keys.rotate(origin: context.origin)
        return ConsolePages.seeOther("/console/signing-keys")
    }
}
