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
        let rows = try await roles.roles(appKey).map { role in
            RoleListPage.Row(
                roleId: role.roleID.rawValue,
                provider: role.provider.rawValue,
                status: role.status.rawValue,
                attestId: role.attestID.rawValue,
                duration: role.durationSeconds
            )
        }
        return pages.page(RoleListPage(title: "STS roles of \(appKey)", appKey: appKey.rawValue, roles: rows), caller: context.console)
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
        let shown = RolePage(
            title: "STS role \(role.roleID.rawValue)",
            appKey: appKey.rawValue,
            roleId: role.roleID.rawValue,
            settings: ConsoleSetting.all(role.snapshot),
            duration: role.durationSeconds
        )
        return pages.page(shown, caller: context.console)
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
        let rows = try await keys.all().map { key in
            SigningKeysPage.Row(
                kid: key.kid,
                createdAt: ConsoleText.time(key.createdAt),
                state: key.retiredAt.map { "retired \(ConsoleText.time($0))" } ?? "active"
            )
        }
        return pages.page(SigningKeysPage(keys: rows), caller: context.console)
    }

    @Sendable func rotateSigningKey(_ request: Request, context: Context) async throws -> Response {
        _ = try await keys.rotate(origin: context.origin)
        return ConsolePages.seeOther("/console/signing-keys")
    }
}

extension ConsoleRolesController {
    struct RoleListPage: ConsolePage {
        static let template = "roles"
        struct Row {
            let roleId: String
            let provider: String
            let status: String
            let attestId: String
            let duration: Int
        }
        let title: String
        let appKey: String
        let roles: [Row]
        let providers = STSProvider.allCases.map(\.rawValue)
    }

    struct RolePage: ConsolePage {
        static let template = "role"
        let title: String
        let appKey: String
        let roleId: String
        let settings: [ConsoleSetting]
        let duration: Int
    }

    struct SigningKeysPage: ConsolePage {
        static let template = "signing-keys"
        struct Row {
            let kid: String
            let createdAt: String
            let state: String
        }
        let title = "Signing keys"
        let keys: [Row]
    }
}
