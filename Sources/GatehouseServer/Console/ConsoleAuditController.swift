import Foundation
import GatehouseCore
import GatehouseOperations
import Hummingbird

/// `/console/audit`: the audit log, newest first, filtered by app, action, actor and time, paged by
/// sequence number, with the API's rules for each filter.
struct ConsoleAuditController {
    typealias Context = ConsoleContext
    let pages: ConsolePages
    let apps: AppOperations

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/console/audit", for: .console, use: audit)
    }

    static let filterNames = ["appKey", "action", "actor", "from", "to"]

    @Sendable func audit(_ request: Request, context: Context) async throws -> Response {
        let filters = ConsoleFilters(request, names: Self.filterNames)
        var query = try AppOperations.AuditQuery(Query.reader(filters.given))
        query.limit = query.limit ?? 50
        let page = try await apps.audit(query)
        let rows = page.records.map { record in
            let entry = record.entry
            return AuditPage.Row(
                seq: record.sequence,
                time: ConsoleText.time(entry.occurredAt),
                actor: entry.actor.description,
                action: entry.action,
                target: "\(entry.targetType) \(entry.targetID)",
                requestId: entry.requestID ?? "",
                address: entry.sourceAddress ?? "",
                change: ConsoleText.change(before: entry.before, after: entry.after)
            )
        }
        let next = filters.next("/console/audit", "before", page.nextBefore.map(String.init))
        return pages.page(AuditPage(filters: filters.shown, records: rows, next: next), caller: context.console)
    }
}

extension ConsoleAuditController {
    struct AuditPage: ConsolePage {
        static let template = "audit"
        struct Row {
            let seq: Int64
            let time: String
            let actor: String
            let action: String
            let target: String
            let requestId: String
            let address: String
            let change: String
        }
        let title = "Audit log"
        let filters: [String: String]
        let records: [Row]
        let next: String?
    }
}
