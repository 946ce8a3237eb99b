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
    let labels: DecisionLabelOperations

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/console/decisions", for: .console, use: explorer)
        routes.on(.get, "/console/apps/:appKey/decisions/:decisionId", for: .console, use: decision)
        routes.on(.post, "/console/apps/:appKey/decisions/:decisionId/labels", for: .consoleChanges, use: label)
    }

    static let filterNames = ["appKey", "eventId", "decision", "tag", "label", "deviceId", "accountId", "address", "from", "to"]

    @Sendable func explorer(_ request: Request, context: Context) async throws -> Response {
        let filters = ConsoleFilters(request, names: Self.filterNames)
        let given = filters.given
        var query = try RiskAdminOperations.DecisionQuery(Query.reader(given))
        query.limit = query.limit ?? 50
        let page = try await risk.decisions(query)
        let rows = page.decisions.map { listed in
            let record = listed.record
            return ExplorerPage.Row(
                id: record.id.text,
                appKey: listed.appKey.rawValue,
                time: ConsoleText.time(record.decidedAt),
                eventId: record.eventID.rawValue,
                decision: record.verdict.decision.rawValue,
                score: record.verdict.score,
                deviceId: record.deviceID?.rawValue ?? "",
                accountId: record.accountID.rawValue,
                address: record.clientAddress ?? "",
                tags: record.verdict.tags.map(\.tag).joined(separator: " "),
                label: record.label?.verdict.rawValue
            )
        }
        let counted = try await refusedCounts(given, filters: filters)
        let shown = ExplorerPage(
            filters: filters.shown,
            decisions: rows,
            empty: rows.isEmpty,
            next: filters.next("/console/decisions", "cursor", page.next),
            counts: counted.rows,
            hasCounts: !counted.rows.isEmpty,
            nextCounts: counted.next,
            outcomes: RiskDecision.allCases.map { .init(value: $0.rawValue, selected: $0.rawValue == given.get("decision")) },
            tags: RiskTag.allCases.map { .init(value: $0.rawValue, selected: $0.rawValue == given.get("tag")) },
            labels: DecisionLabel.Verdict.allCases.map { .init(value: $0.rawValue, selected: $0.rawValue == given.get("label")) }
        )
        return pages.page(shown, caller: context.console)
    }

    /// Refused decisions counted, not stored, for the filters they have (app, address, time): each
    /// links to the decisions stored whole for the same app, address and minute, its samples. With a
    /// filter counts do not carry (an event, a device...), none are shown.
    private func refusedCounts(_ given: Parameters, filters: ConsoleFilters) async throws -> (rows: [ExplorerPage.Count], next: String?) {
        let countable: Set = ["appKey", "address", "from", "to"]
        guard Self.filterNames.allSatisfy({ countable.contains($0) || given.get($0) == nil }) else { return ([], nil) }
        var query = try RiskAdminOperations.RefusedCountQuery(Query.reader(given))
        query.cursor = given.get("countsCursor")
        query.limit = 20
        let page = try await risk.refusedCounts(query)
        let rows = page.counts.map { listed in
            let count = listed.count
            var samples = URLComponents()
            samples.queryItems =
                [
                    URLQueryItem(name: "appKey", value: listed.appKey.rawValue),
                    URLQueryItem(name: "from", value: ConsoleText.time(count.minute)),
                    URLQueryItem(name: "to", value: ConsoleText.time(count.minute.addingTimeInterval(60))),
                ] + (count.clientAddress == RefusedDecisionSampler.otherAddresses ? [] : [URLQueryItem(name: "address", value: count.clientAddress)])
            return ExplorerPage.Count(
                appKey: listed.appKey.rawValue,
                minute: ConsoleText.time(count.minute),
                address: count.clientAddress,
                tokenState: count.tokenState.rawValue,
                decisions: count.decisions,
                first: ConsoleText.time(count.firstAt),
                last: ConsoleText.time(count.lastAt),
                samples: "/console/decisions" + (samples.string ?? "")
            )
        }
        return (rows, filters.next("/console/decisions", "countsCursor", page.next))
    }

    @Sendable func decision(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        let record = try await risk.decision(appKey, id: context.parameters.get("decisionId") ?? "")
        let facts: [DecisionPage.Fact] =
            [
                ("App", appKey.rawValue), ("Decided at", ConsoleText.time(record.decidedAt)), ("Event", "\(record.eventID.rawValue)"),
                ("Decision", record.verdict.decision.rawValue), ("Score", "\(record.verdict.score)"), ("Account", record.accountID.rawValue),
                ("Device", record.deviceID?.rawValue ?? "none"), ("ztoken", record.tokenID ?? "none"), ("ztoken state", record.tokenState.rawValue),
                ("Client address", record.clientAddress ?? "unknown"), ("User agent", record.userAgent ?? "unknown"),
                ("Page", record.pageURL ?? "none"),
                ("Policy version", "\(record.policyVersion)"),
            ].map { DecisionPage.Fact(name: $0.0, value: $0.1) }
            + (record.shadow.map { [DecisionPage.Fact(name: "Shadow policy", value: "\($0.decision.rawValue) (score \($0.score)), not answered")] }
                ?? [])
        let shown = DecisionPage(
            title: "Decision \(record.id.text)",
            facts: facts,
            appKey: appKey.rawValue,
            decisionId: record.id.text,
            deviceId: record.deviceID?.rawValue,
            tags: record.verdict.tags,
            hasRules: !record.verdict.rules.isEmpty,
            rules: record.verdict.rules.map {
                DecisionPage.Rule(rule: $0.rule, mode: $0.mode.rawValue, effect: $0.effect, error: $0.error, applied: $0.mode == .enforce)
            },
            label: record.label.map {
                DecisionPage.Label(
                    label: $0.verdict.rawValue,
                    kind: $0.kind.rawValue,
                    note: $0.note,
                    by: $0.labelledBy,
                    at: ConsoleText.time($0.labelledAt)
                )
            },
            kinds: DecisionLabel.Kind.allCases.map(\.rawValue)
        )
        return pages.page(shown, caller: context.console)
    }

    /// The label buttons of the decision page, through the operations the API uses.
    @Sendable func label(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        let id = context.parameters.get("decisionId") ?? ""
        let form = context.form
        let input = DecisionLabelOperations.Input(label: form["label"] ?? "", kind: form["kind"] ?? "", note: ConsoleForm.optional(form, "note"))
        let record = try await labels.label(appKey, decisionID: id, input, origin: context.origin)
        return ConsolePages.seeOther("/console/apps/\(appKey)/decisions/\(record.id.text)")
    }
}

extension ConsoleDecisionsController {
    struct ExplorerPage: ConsolePage {
        static let template = "decisions"
        struct Row {
            let id: String
            let appKey: String
            let time: String
            let eventId: Int
            let decision: String
            let score: Int
            let deviceId: String
            let accountId: String
            let address: String
            let tags: String
            let label: String?
        }
        struct Choice {
            let value: String
            let selected: Bool
        }
        /// Refused decisions of one app, address, token state and minute, counted instead of stored.
        struct Count {
            let appKey: String
            let minute: String
            let address: String
            let tokenState: String
            let decisions: Int
            let first: String
            let last: String
            /// The explorer showing the decisions stored whole for that app, address and minute.
            let samples: String
        }
        let title = "Decisions"
        let filters: [String: String]
        let decisions: [Row]
        let empty: Bool
        let next: String?
        let counts: [Count]
        let hasCounts: Bool
        let nextCounts: String?
        let outcomes: [Choice]
        let tags: [Choice]
        let labels: [Choice]
    }

    struct DecisionPage: ConsolePage {
        static let template = "decision"
        struct Fact {
            let name: String
            let value: String
        }
        let title: String
        let facts: [Fact]
        let appKey: String
        let decisionId: String
        let deviceId: String?
        /// Each with its `tag`, `reason` and `weight`.
        let tags: [TagHit]
        /// What the policy rules did: matched in enforce (applied), in monitor (would have), or failed.
        struct Rule {
            let rule: String
            let mode: String
            let effect: String
            let error: String?
            let applied: Bool
        }
        let hasRules: Bool
        let rules: [Rule]
        struct Label {
            let label: String
            let kind: String
            let note: String?
            let by: String
            let at: String
        }
        let label: Label?
        let kinds: [String]
    }
}
