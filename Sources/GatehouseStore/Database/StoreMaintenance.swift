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
    func masterKeyCheck(orInsert candidate: [UInt8]) async throws(StoreError) -> [UInt8]
    var poolUsage: PoolUsage { get }
    /// The group commits' own pool (`SQLDatabase.forBatches`); nil where they share the main one (SQLite).
    var batchPoolUsage: PoolUsage? { get }
}

public struct SchemaStatus: Sendable, Equatable {
    public let applied: [Int]
    public let pending: [Int]
}
