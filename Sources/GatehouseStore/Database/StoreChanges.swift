import Foundation
import GatehouseCore
import Synchronization

/// The count of audited changes made through this instance, shared by every capability's store:
/// each store's cached rows (`ReadThroughCache`) are copies read before the count moved, and are
/// dropped when it does. One count rather than a list of caches to empty, because the rows one
/// change touches are read by other capabilities (an attester is part of an app's risk policy).
final class StoreChanges: Sendable {
    private let counter = Atomic<Int>(0)

    var count: Int { counter.load(ordering: .acquiring) }

    func record() { _ = counter.add(1, ordering: .releasing) }
}

/// One capability's store: its statements over the one database, and the operators' changes it
/// writes, each with its audit entry.
protocol CapabilityStore: Sendable {
    var database: any SQLDatabase { get }
    var changes: StoreChanges { get }
}

extension CapabilityStore {
    /// Runs a write and its audit entry atomically, translating whatever escapes into a `StoreError`.
    func changing(
        _ audit: AuditEntry,
        _ body: @escaping @Sendable (any SQLDatabase) async throws -> Void
    )
        async throws(StoreError)
    {
        // Counted whatever the outcome: a commit whose answer was lost still changed the rows.
        defer { changes.record() }
        do {
            try await database.transaction { transaction in
                try await body(transaction)
                try await AuditRows.append(audit, in: transaction)
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw .unavailable(String(describing: type(of: error)))
        }
    }
}
