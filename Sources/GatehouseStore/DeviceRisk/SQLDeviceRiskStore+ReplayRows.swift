import Foundation
import GatehouseCore

/// Reading replay rows, and the decisions a replay reads, back into domain values.
extension SQLDeviceRiskStore {
    static func storedDecision(_ row: SQLRow, appID: AppID) throws(StoreError) -> StoredDecision {
        guard let decision = RiskDecision(rawValue: try row.text("decision")) else { throw .corruptRow("decision outcome") }
        let label = try row.optionalText("label").flatMap(DecisionLabel.Verdict.init(rawValue:))
        var judged: JudgedQuery?
        // A decision without readable facts, or whose columns no longer read as they were written,
        // is counted apart rather than failing the replay.
        if case .bytes(let bytes)? = row.values["facts"], let facts = DecisionFacts(decoding: bytes),
            let event = try? EventID(validating: Int(try row.int("event_id"))), let account = try? AccountID(validating: try row.text("account_id")),
            let state = ZTokenState(rawValue: try row.text("token_state")),
            let address = try row.optionalText("client_address").flatMap(IPAddress.init)
        {
            judged = JudgedQuery(
                appID: appID,
                eventID: event,
                accountID: account,
                deviceID: try row.optionalText("device_id").flatMap { try? DeviceID(validating: $0) },
                clientAddress: address,
                userAgent: try row.optionalText("user_agent"),
                at: try row.date("decided_at"),
                state: state,
                facts: facts
            )
        }
        return StoredDecision(
            id: try row.uuid("decision_id"),
            decidedAt: try row.date("decided_at"),
            decision: decision,
            score: Int(try row.int("score")),
            label: label,
            judged: judged
        )
    }

    static func replayRun(_ row: SQLRow) throws(StoreError) -> ReplayRun {
        let appID = AppID(try row.uuid("app_id"))
        guard let status = ReplayRun.Status(rawValue: try row.text("status")),
            let document = PolicyDocument(storedJSON: try row.text("document"), appID: appID)
        else { throw .corruptRow("replay") }
        var report: ReplayReport?
        if let text = try row.optionalText("report") {
            guard let decoded = try? JSONDecoder().decode(ReplayReport.self, from: Data(text.utf8)) else { throw .corruptRow("replay report") }
            report = decoded
        }
        return ReplayRun(
            id: try row.uuid("replay_id"),
            appID: appID,
            status: status,
            requestedBy: try row.text("requested_by"),
            proposedVersion: try row.optionalInt("proposed_version").map(Int.init),
            document: document,
            from: try row.date("window_from"),
            to: try row.date("window_to"),
            total: Int(try row.int("total")),
            processed: Int(try row.int("processed")),
            report: report,
            error: try row.optionalText("error"),
            startedAt: try row.date("started_at"),
            updatedAt: try row.date("updated_at"),
            finishedAt: try row.optionalDate("finished_at")
        )
    }

    static func json(_ report: ReplayReport) -> String {
        // Counts and names only: encoding cannot fail.
        String(decoding: (try? JSONEncoder().encode(report)) ?? Data("{}".utf8), as: UTF8.self)
    }
}
