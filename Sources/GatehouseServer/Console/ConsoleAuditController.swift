import Foundation
import GatehouseCore
import Hummingbird

/// `/console/audit`: the audit log, newest first, filtered by app, paged by sequence number.
struct ConsoleAuditController {
    typealias Context = GatehouseRequestContext
    let pages: ConsolePages
    let apps: AppOperations

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/console/audit", for: .console, use: audit)
    }

    @Sendable func audit(_ request: Request, context: Context) async throws -> Response {
        let given = Parameters(request.uri.queryParameters.filter { !$0.value.isEmpty })
        let before = try Query.int(given, "before").map(Int64.init)
        if let before, before < 1 { throw Problem.badParameter("before", "before is a sequence number, 1 or more.") }
        let appKey = given.get("appKey")
        let page = try await apps.audit(before: before, appKey: appKey, limit: 50)
        let rows: [[String: Any]] = page.records.map { record in
            let entry = record.entry
            return [
                "seq": record.sequence, "time": ConsoleText.time(entry.occurredAt), "actor": entry.actor.description, "action": entry.action,
                "target": "\(entry.targetType) \(entry.targetID)", "requestId": entry.requestID ?? "", "address": entry.sourceAddress ?? "",
                "change": ConsoleText.change(before: entry.before, after: entry.after),
            ]
        }
        var next = URLComponents()
        next.queryItems =
            (appKey.map { [URLQueryItem(name: "appKey", value: $0)] } ?? []) + [
                URLQueryItem(name: "before", value: page.nextBefore.map(String.init) ?? "")
            ]
        return pages.page(
            "audit",
            [
                "title": "Audit log", "appKey": appKey ?? "", "records": rows,
                "next": page.nextBefore == nil ? "" : "/console/audit" + (next.string ?? ""),
            ],
            caller: context.console
        )
    }
}
