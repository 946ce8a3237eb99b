import Foundation
import GatehouseCore

/// Labels: the last one given stands in the decision's row, the audit log keeps each.
extension SQLDeviceRiskStore {
    public func labelDecision(appID: AppID, id: UUID, label: DecisionLabel, audit: AuditEntry) async throws(StoreError) -> RiskDecisionRecord {
        // A decision written behind its answer is labelled once its row is in.
        await refusedDecisions.caughtUp()
        do {
            return try await database.transaction { transaction in
                // Not `changing(_:_:)`: a label changes no policy, so no instance's copies need renewing.
                let rows = try await transaction.query(
                    """
                    UPDATE risk_decisions SET label = \(.text(label.verdict.rawValue)), label_kind = \(.text(label.kind.rawValue)),
                      label_note = \(.optional(label.note)), labelled_by = \(.text(label.labelledBy)), labelled_at = \(.date(label.labelledAt)),
                      label_count = label_count + 1
                    WHERE app_id = \(.uuid(appID.rawValue)) AND decision_id = \(.uuid(id)) AND label_count < \(.int(Int64(DecisionLabel.maximumPerDecision)))
                    RETURNING *
                    """
                )
                guard let row = rows.first else {
                    let exists = try await transaction.query(
                        "SELECT 1 AS one FROM risk_decisions WHERE app_id = \(.uuid(appID.rawValue)) AND decision_id = \(.uuid(id))"
                    )
                    throw exists.isEmpty ? StoreError.notFound("no decision \(id)") : StoreError.conflict("decision \(id) has its labels")
                }
                try await AuditRows.append(audit, in: transaction)
                return try Self.decisionRecord(row)
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw .unavailable(String(describing: type(of: error)))
        }
    }
}
