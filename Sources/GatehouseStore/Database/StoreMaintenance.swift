import Foundation
import GatehouseCore

/// What the service needs of the database as a whole.
public protocol StoreMaintenance: Sendable {
    var dialect: SQLDialect { get }
    /// Applies pending migrations; returns the versions applied.
    func migrate() async throws -> [Int]
    /// Applied versions, and versions shipped in this build that the database has not applied.
    func schemaStatus() async throws -> SchemaStatus
    /// Stores `candidate` as the master key check unless one exists; returns the one in force.
    /// Creates the time ranges the partitioned tables need ahead of `now` (PostgreSQL; TimePartitions.swift).
    /// Nil when another instance holds the purge lock and is doing it.
    func keepPartitions(at now: Date) async throws -> PartitionReport?
    func masterKeyCheck(orInsert candidate: [UInt8]) async throws(StoreError) -> [UInt8]
    var poolUsage: PoolUsage { get }
}

/// Everything Gatehouse persists, behind one value that both database implementations provide.
public typealias GatehouseStore = AppStore & AdminTokenStore & AuditLog & StoreMaintenance & RetentionStore & DeviceRiskStore & AttestationStore
    & CaptchaStore
    & STSRoleStore
    & SignatureStore

public struct SchemaStatus: Sendable, Equatable {
    public let applied: [Int]
    public let pending: [Int]
}
