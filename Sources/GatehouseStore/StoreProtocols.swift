import Foundation
import GatehouseCore

/// Apps with their sealed secrets and registered events. Every change takes the audit entry that
/// describes it and writes both in one transaction.
public protocol AppStore: Sendable {
    /// Fails with `.conflict` when the appKey is taken; nothing is written then.
    func createApp(_ app: App, secrets: [SealedSecret], audit: AuditEntry) async throws(StoreError)
    func app(withKey appKey: AppKey) async throws(StoreError) -> App?
    /// Apps ordered by appKey, starting after `after`.
    func listApps(after: AppKey?, limit: Int) async throws(StoreError) -> [App]
    /// Changes the status only if it still is `from`; `.conflict` if another change came first.
    func changeStatus(of app: App, from: AppStatus, to updated: App, audit: AuditEntry) async throws(StoreError)
    func secrets(of appID: AppID) async throws(StoreError) -> [SealedSecret]
    /// The app with its secrets, as `app(withKey:)` then `secrets(of:)` would give them. Every request
    /// asks this, so it may come from the instance's copy: a change made through another instance is
    /// seen within `SQLStore.cacheLifetime`.
    func appWithSecrets(withKey appKey: AppKey) async throws(StoreError) -> (app: App, secrets: [SealedSecret])?
    /// Stores a new secret version and the new end of life of older versions. `.conflict` if a
    /// concurrent rotation took this version number first.
    func rotateSecret(_ secret: SealedSecret, retirements: [Int: Date], audit: AuditEntry) async throws(StoreError)
    /// `.conflict` if the event is already registered for the app.
    func registerEvent(_ event: RegisteredEvent, audit: AuditEntry) async throws(StoreError)
    func events(of appID: AppID) async throws(StoreError) -> [RegisteredEvent]
}

/// Operators' admin tokens, stored by hash.
public protocol AdminTokenStore: Sendable {
    /// `.conflict` when the name is taken.
    func createAdminToken(_ token: AdminToken, audit: AuditEntry) async throws(StoreError)
    func adminToken(withHash hash: [UInt8]) async throws(StoreError) -> AdminToken?
    func listAdminTokens() async throws(StoreError) -> [AdminToken]
    /// `.notFound` if no live token has that name.
    func revokeAdminToken(named name: String, at now: Date, audit: AuditEntry) async throws(StoreError)
    func hasAdminTokens() async throws(StoreError) -> Bool
}

/// The append-only audit log: entries arrive with the changes they describe; this reads them back.
public protocol AuditLog: Sendable {
    /// Newest first, strictly before `before` when given.
    func auditRecords(before: Int64?, appID: AppID?, limit: Int) async throws(StoreError) -> [AuditRecord]
}

/// What the service needs of the database as a whole.
public protocol StoreMaintenance: Sendable {
    var dialect: SQLDialect { get }
    /// Applies pending migrations; returns the versions applied.
    func migrate() async throws -> [Int]
    /// Applied versions, and versions shipped in this build that the database has not applied.
    func schemaStatus() async throws -> SchemaStatus
    /// Stores `candidate` as the master key check unless one exists; returns the one in force.
    func masterKeyCheck(orInsert candidate: [UInt8]) async throws(StoreError) -> [UInt8]
    var poolUsage: PoolUsage { get }
}

/// Everything Gatehouse persists, behind one value that both database implementations provide.
public typealias GatehouseStore = AppStore & AdminTokenStore & AuditLog & StoreMaintenance & DeviceRiskStore & AttestationStore & CaptchaStore
    & StorageRoleStore
    & SignatureStore

public struct SchemaStatus: Sendable, Equatable {
    public let applied: [Int]
    public let pending: [Int]
}
