// Admin: operators' admin tokens, the append-only audit log and the master key.
// Serves the operators of every seed's server half; no SDK calls it.

import Foundation
import GatehouseCore

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
    func auditRecords(matching filter: AuditFilter, before: Int64?, limit: Int) async throws(StoreError) -> [AuditRecord]
}

/// Filters for reading the audit log back; nil means any.
public struct AuditFilter: Sendable {
    public var appID: AppID?
    public var action: String?
    public var actor: Actor?
    /// Entries at or after this time.
    public var from: Date?
    /// Entries before this time.
    public var to: Date?

    public init(appID: AppID? = nil, action: String? = nil, actor: Actor? = nil, from: Date? = nil, to: Date? = nil) {
        self.appID = appID
        self.action = action
        self.actor = actor
        self.from = from
        self.to = to
    }
}
