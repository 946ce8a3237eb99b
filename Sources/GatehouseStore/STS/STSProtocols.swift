import Foundation
import GatehouseCore

/// A role as stored: its settings and its upstream key pair sealed with the master key.
public struct StoredRole: Sendable, Equatable {
    public let role: STSRole
    public let sealedKey: [UInt8]

    public init(role: STSRole, sealedKey: [UInt8]) {
        self.role = role
        self.sealedKey = sealedKey
    }
}

/// Temporary credentials as cached: sealed, with their expiry in the clear for the purger.
public struct CachedCredentials: Sendable, Equatable {
    public let sealed: [UInt8]
    public let expiresAt: Date

    public init(sealed: [UInt8], expiresAt: Date) {
        self.sealed = sealed
        self.expiresAt = expiresAt
    }
}

/// What STS credential vending persists.
public protocol STSRoleStore: Sendable {
    /// Fails with `.conflict` when the app already has this roleId.
    func createRole(_ role: StoredRole, audit: AuditEntry) async throws(StoreError)
    /// Replaces the role if it still reads as `from` (else `.conflict`) and forgets its cached
    /// credentials, which were issued under the old settings.
    func updateRole(from: STSRole, to updated: StoredRole, audit: AuditEntry) async throws(StoreError)
    func role(appID: AppID, roleID: RoleID) async throws(StoreError) -> StoredRole?
    func roles(appID: AppID) async throws(StoreError) -> [StoredRole]

    /// The device's latest risk decision since `decidedAfter` and the account it was about: the
    /// app's backend vouched for that account when it asked.
    func latestDecision(appID: AppID, deviceID: DeviceID, decidedAfter: Date) async throws(StoreError) -> (decision: RiskDecision, accountID: String)?

    func cachedCredentials(appID: AppID, roleID: RoleID, cacheKey: String) async throws(StoreError) -> CachedCredentials?
    /// Inserts or replaces the cached credentials for this key.
    func cacheCredentials(appID: AppID, roleID: RoleID, cacheKey: String, _ credentials: CachedCredentials, at now: Date) async throws(StoreError)
}
