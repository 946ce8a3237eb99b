// Admin: operators' admin tokens, the append-only audit log and the master key.
// Serves the operators of every seed's server half; no SDK calls it.

import Foundation
import GatehouseCore
import GatehouseStore

/// Creating, listing and revoking admin tokens: done on the host with the CLI, audited like any change.
public struct AdminTokenOperations: Sendable {
    let store: any AdminTokenStore
    let clock: any GatehouseClock

    public init(store: any AdminTokenStore, clock: any GatehouseClock) {
        self.store = store
        self.clock = clock
    }

    /// - Returns: the token's plaintext, to print once.
    public func create(name: String, role: AdminRole = .admin, origin: ChangeOrigin) async throws -> String {
        let now = clock.now()
        var generator = SystemRandomNumberGenerator()
        let issued = try AdminToken.issue(name: name, role: role, at: now, using: &generator)
        let audit = origin.entry(
            at: now,
            action: "admin_token.create",
            targetType: "admin_token",
            targetID: issued.record.name,
            appID: nil,
            before: nil,
            after: ["name": .string(issued.record.name), "role": .string(role.rawValue)]
        )
        do {
            try await store.createAdminToken(issued.record, audit: audit)
        } catch .conflict {
            throw DomainError(.adminTokenNameTaken, "An admin token named '\(name)' exists.")
        }
        return issued.plaintext
    }

    public func list() async throws -> [AdminToken] {
        try await store.listAdminTokens()
    }

    public func revoke(name: String, origin: ChangeOrigin) async throws {
        let now = clock.now()
        let audit = origin.entry(
            at: now,
            action: "admin_token.revoke",
            targetType: "admin_token",
            targetID: name,
            appID: nil,
            before: ["name": .string(name), "revoked": .string("no")],
            after: ["name": .string(name), "revoked": .string("yes")]
        )
        try await store.revokeAdminToken(named: name, at: now, audit: audit)
    }
}
