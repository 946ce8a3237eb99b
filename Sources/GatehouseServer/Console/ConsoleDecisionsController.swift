import Foundation
import GatehouseCore
import GatehouseOperations
import Hummingbird

/// `/console/decisions`: the decisions explorer (the API's filters, read by the same code, and its
/// keyset paging), and one decision in full.
struct ConsoleDecisionsController {
    typealias Context = ConsoleContext
    let pages: ConsolePages
    let risk: RiskAdminOperations

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/console/decisions", for: .console, use: explorer)
        routes.on(.get, "/console/apps/:appKey/decisions/:decisionId", for: .console, use: decision)
    }

    static let filterNames = ["appKey", "eventId", "decision", "tag", "deviceId", "accountId", "address", "from", "to"]

    @Sendable func explorer(_ request: Request, context: Context) async throws -> Response {
        let filters = ConsoleFilters(request, names: Self.filterNames)
        let given = filters.given
        var query = try RiskAdminOperations.DecisionQuery(Query.reader(given))
        query.limit = query.limit ?? 50
        let page = try await risk.decisions(query)
        let rows: [[String: Any]] = page.decisions.map { listed in
            let record = listed.record
            return [
                "id": record.id.uuidString.lowercased(), "appKey": listed.appKey.rawValue, "time": ConsoleText.time(record.decidedAt),
                "eventId": record.eventID.rawValue, "decision": record.verdict.decision.rawValue, "score": record.verdict.score,
                "deviceId": record.deviceID?.rawValue ?? "", "accountId": record.accountID.rawValue, "address": record.clientAddress ?? "",
                "tags": record.verdict.tags.map(\.tag).joined(separator: " "),
            ]
        }
        return pages.page(
            "decisions",
            [
                "title": "Decisions", "filters": filters.shown, "decisions": rows, "empty": rows.isEmpty,
                "next": filters.next("/console/decisions", "cursor", page.next),
                "outcomes": RiskDecision.allCases.map { ["value": $0.rawValue, "selected": $0.rawValue == given.get("decision")] },
                "tags": RiskTag.allCases.map { ["value": $0.rawValue, "selected": $0.rawValue == given.get("tag")] },
            ],
            caller: context.console
        )
    }

    @Sendable func decision(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        let record = try await risk.decision(appKey, id: context.parameters.get("decisionId") ?? "")
        let facts: [[String: Any]] = [
            ("App", appKey), ("Decided at", ConsoleText.time(record.decidedAt)), ("Event", "\(record.eventID.rawValue)"),
            ("Decision", record.verdict.decision.rawValue), ("Score", "\(record.verdict.score)"), ("Account", record.accountID.rawValue),
            ("Device", record.deviceID?.rawValue ?? "none"), ("ztoken", record.tokenID ?? "none"), ("ztoken state", record.tokenState.rawValue),
            ("Client address", record.clientAddress ?? "unknown"), ("User agent", record.userAgent ?? "unknown"), ("Page", record.pageURL ?? "none"),
        ].map { ["name": $0.0, "value": $0.1] }
        return pages.page(
            "decision",
            [
                "title": "Decision \(record.id.uuidString.lowercased())", "facts": facts, "appKey": appKey.rawValue,
                "deviceId": record.deviceID?.rawValue ?? "",
                "tags": record.verdict.tags.map { ["tag": $0.tag, "reason": $0.reason, "weight": $0.weight] },
            ],
            caller: context.console
        )
    }
}
