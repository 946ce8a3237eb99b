import Foundation
import GatehouseCore

/// The audit log's rows: every operator change appends one in its own transaction
/// (`CapabilityStore.changing`), with the before and after states as sorted JSON.
enum AuditRows {
    static func append(_ entry: AuditEntry, in transaction: any SQLDatabase) async throws(StoreError) {
        try await transaction.query(
            """
            INSERT INTO audit_log (occurred_at, actor, action, target_type, target_id, app_id,
                                   before_state, after_state, request_id, source_address)
            VALUES (\(.date(entry.occurredAt)), \(.text(entry.actor.description)), \(.text(entry.action)), \(.text(entry.targetType)),
              \(.text(entry.targetID)), \(.optional(entry.appID?.rawValue)), \(.optional(try encode(entry.before))),
              \(.optional(try encode(entry.after))), \(.optional(entry.requestID)), \(.optional(entry.sourceAddress)))
            """
        )
    }

    private static let snapshotEncoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }()

    static func encode(_ snapshot: AuditSnapshot?) throws(StoreError) -> String? {
        guard let snapshot else { return nil }
        guard let data = try? snapshotEncoder.encode(snapshot) else { throw .corruptRow("audit snapshot does not encode") }
        return String(decoding: data, as: UTF8.self)
    }

    static func decodeSnapshot(_ text: String?) throws(StoreError) -> AuditSnapshot? {
        guard let text else { return nil }
        guard let snapshot = try? JSONDecoder().decode(AuditSnapshot.self, from: Data(text.utf8)) else {
            throw .corruptRow("audit snapshot is not JSON")
        }
        return snapshot
    }
}
