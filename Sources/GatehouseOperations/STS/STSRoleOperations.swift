import Foundation
import GatehouseCore
import GatehouseStore

/// Operators' STS roles: create, change, read. The upstream key pair is sealed on the way in and
/// never comes back out; a change of key is audited as "key replaced", without the key.
public struct STSRoleOperations: Sendable {
    let store: any STSRoleStore
    let apps: AppOperations
    let box: SecretBox
    let clock: any GatehouseClock
    /// `GATEHOUSE_STS_PRIVATE_ENDPOINTS`: whether a role may name an internal or plain-http STS.
    let allowInternalEndpoints: Bool

    public init(store: any STSRoleStore, apps: AppOperations, box: SecretBox, clock: any GatehouseClock, allowInternalEndpoints: Bool) {
        self.store = store
        self.apps = apps
        self.box = box
        self.clock = clock
        self.allowInternalEndpoints = allowInternalEndpoints
    }

    private func checkEndpoint(_ role: STSRole) throws(DomainError) {
        if let refusal = UpstreamEndpoint.refusal(role.stsEndpoint, allowInternal: allowInternalEndpoints) {
            throw DomainError(.invalidRole, "stsEndpoint: \(refusal).", field: "stsEndpoint")
        }
    }

    public func createRole(_ appKey: AppKey, roleID: RoleID, change: RoleChange, key: UpstreamKey?, origin: ChangeOrigin) async throws -> STSRole {
        let app = try await apps.app(appKey)
        try app.requireChangeable()
        let id = roleID
        guard let key else {
            throw DomainError(.invalidRole, "A role needs the accessKeyId and accessKeySecret it calls its STS with.", field: "accessKeyId")
        }
        let now = clock.now()
        let role = try change.created(appID: app.id, roleID: id, at: now)
        try checkEndpoint(role)
        var after = role.snapshot
        after["key"] = .string("set")
        let audit = origin.entry(
            at: now,
            action: "role.create",
            targetType: "role",
            targetID: "\(app.appKey)/\(id)",
            appID: app.id,
            before: nil,
            after: after
        )
        let stored = StoredRole(role: role, sealedKey: try seal(key, for: role))
        do {
            try await store.createRole(stored, audit: audit)
        } catch {
            if case .conflict = error { throw DomainError(.roleExists, "App \(app.appKey) already has role \(id).", field: "roleId") }
            throw error
        }
        return role
    }

    public func updateRole(_ appKey: AppKey, roleID: RoleID, change: RoleChange, key: UpstreamKey?, origin: ChangeOrigin) async throws -> STSRole {
        let app = try await apps.app(appKey)
        try app.requireChangeable()
        let stored = try await storedRole(app, roleID)
        let now = clock.now()
        let updated = try change.applied(to: stored.role, at: now)
        try checkEndpoint(updated)
        var after = updated.snapshot
        if key != nil { after["key"] = .string("replaced") }
        let audit = origin.entry(
            at: now,
            action: "role.update",
            targetType: "role",
            targetID: "\(app.appKey)/\(updated.roleID)",
            appID: app.id,
            before: stored.role.snapshot,
            after: after
        )
        let sealed = try key.map { try seal($0, for: updated) } ?? stored.sealedKey
        try await store.updateRole(from: stored.role, to: StoredRole(role: updated, sealedKey: sealed), audit: audit)
        return updated
    }

    public func roles(_ appKey: AppKey) async throws -> [STSRole] {
        try await store.roles(appID: try await apps.app(appKey).id).map(\.role)
    }

    public func role(_ appKey: AppKey, roleID: RoleID) async throws -> STSRole {
        try await storedRole(try await apps.app(appKey), roleID).role
    }

    func storedRole(_ app: App, _ roleID: RoleID) async throws -> StoredRole {
        let id = roleID
        guard let stored = try await store.role(appID: app.id, roleID: id) else {
            throw DomainError(.roleNotFound, "App \(app.appKey) has no role \(id).", field: "roleId")
        }
        return stored
    }

    /// The key pair opens only under this app and role's context, so a sealed key copied onto
    /// another role's row does not open.
    func seal(_ key: UpstreamKey, for role: STSRole) throws -> [UInt8] {
        box.seal(Array(try JSONEncoder().encode(key)), context: Self.keyContext(role))
    }

    func openKey(_ stored: StoredRole) throws -> UpstreamKey {
        try JSONDecoder().decode(UpstreamKey.self, from: Data(try box.open(stored.sealedKey, context: Self.keyContext(stored.role))))
    }

    static func keyContext(_ role: STSRole) -> String { SealedValue.roleKeyContext(appID: role.appID, roleID: role.roleID.rawValue) }
}
