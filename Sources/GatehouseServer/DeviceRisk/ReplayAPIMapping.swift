import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseOperations

/// Policy versions and replays into the generated API types, and a replay request out of them.
extension Components.Schemas.PolicyVersionSummary {
    init(_ version: PolicyVersion) {
        self.init(
            version: version.number,
            publishedAt: version.publishedAt,
            publishedBy: version.publishedBy,
            change: version.change,
            policyRules: version.document.policyRules.count,
            listEntries: version.document.lists.count
        )
    }
}

extension Components.Schemas.PolicyVersion {
    init(_ version: PolicyVersion) {
        let uncompiled = version.document.uncompiled
        self.init(
            version: version.number,
            publishedAt: version.publishedAt,
            publishedBy: version.publishedBy,
            change: version.change,
            document: .init(version.document),
            uncompiled: uncompiled.isEmpty ? nil : uncompiled.map { .init(rule: $0.rule, error: $0.error) }
        )
    }
}

extension Components.Schemas.PolicyDocument {
    init(_ document: PolicyDocument) {
        self.init(
            rules: .init(
                additionalProperties: Dictionary(
                    uniqueKeysWithValues: document.rules.map { ($0.key == 0 ? "app" : String($0.key), Components.Schemas.RiskRules($0.value)) }
                )
            ),
            lists: document.lists.map(Components.Schemas.RiskListEntry.init),
            policyRules: document.policyRules.map(Components.Schemas.PolicyRule.init)
        )
    }
}

extension Components.Schemas.ShadowPolicy {
    init(_ shadow: PolicyShadow) {
        self.init(version: shadow.version, startedAt: shadow.startedAt, startedBy: shadow.startedBy, document: .init(shadow.document))
    }
}

/// A proposed policy's parts as the API sends them (a replay's and a shadow's), in the domain's terms.
enum ProposedPolicyBody {
    static func rules(_ given: [String: Components.Schemas.RiskRules]?) throws -> [Int: RiskRules]? {
        guard let given else { return nil }
        var rules: [Int: RiskRules] = [:]
        for (scope, value) in given {
            guard let number = scope == "app" ? 0 : Int(scope) else {
                throw DomainError(.invalidReplay, "A scope is app or an event id from 3300 to 3400.", field: "rules")
            }
            rules[number] = RiskRules(value)
        }
        return rules
    }

    static func policyRules(_ given: [Components.Schemas.PolicyRuleProposal]?) throws -> [PolicyRule]? {
        try given?.map { proposal throws in
            PolicyRule(
                name: proposal.name,
                when: proposal.when,
                then: try PolicyRule.Effect(proposal.then),
                mode: PolicyRule.Mode(rawValue: proposal.mode?.rawValue ?? "enforce") ?? .enforce,
                eventID: try proposal.eventId.map { value throws(DomainError) in try EventID(validating: value) }
            )
        }
    }
}

extension ReplayOperations.Request {
    init(_ body: Components.Schemas.ReplayCreate) throws {
        self.init(
            from: body.from,
            to: body.to,
            version: body.version,
            rules: try ProposedPolicyBody.rules(body.rules?.additionalProperties),
            policyRules: try ProposedPolicyBody.policyRules(body.policyRules)
        )
    }
}

extension Components.Schemas.Replay {
    init(_ run: ReplayRun) {
        self.init(
            replayId: run.id.text,
            status: .init(rawValue: run.status.rawValue) ?? .failed,
            progress: run.progress,
            processed: run.processed,
            total: run.total,
            version: run.proposedVersion,
            requestedBy: run.requestedBy,
            from: run.from,
            to: run.to,
            startedAt: run.startedAt,
            finishedAt: run.finishedAt,
            error: run.error,
            report: run.report.map(Components.Schemas.ReplayReport.init)
        )
    }
}

extension Components.Schemas.ReplayReport {
    init(_ report: ReplayReport) {
        let outcomes = RiskDecision.allCases
        var cells: [Components.Schemas.ReplayCell] = []
        for (row, before) in outcomes.enumerated() {
            for (column, after) in outcomes.enumerated() {
                cells.append(
                    .init(
                        before: .init(rawValue: before.rawValue) ?? .pass,
                        after: .init(rawValue: after.rawValue) ?? .pass,
                        count: report.matrix[row][column]
                    )
                )
            }
        }
        self.init(
            replayed: report.replayed,
            withoutFacts: report.withoutFacts,
            changed: report.changed,
            matrix: cells,
            rules: report.rules.keys.sorted().map { name in
                let tally = report.rules[name] ?? ReplayReport.RuleTally()
                return .init(
                    rule: name,
                    hits: tally.hits,
                    errors: tally.errors,
                    fraudHits: tally.fraudHits,
                    legitimateHits: tally.legitimateHits,
                    precision: ReplayReport.precision(fraud: tally.fraudHits, legitimate: tally.legitimateHits),
                    recall: report.recall(flaggedFraud: tally.fraudHits)
                )
            },
            fraud: report.fraud,
            legitimate: report.legitimate,
            precisionBefore: report.precisionBefore,
            precisionAfter: report.precisionAfter,
            recallBefore: report.recallBefore,
            recallAfter: report.recallAfter
        )
    }
}

extension Components.Schemas.ReplayChange {
    init(_ change: ChangedDecision, appKey: AppKey) {
        let id = change.id.text
        self.init(
            decisionId: id,
            decidedAt: change.decidedAt,
            before: .init(rawValue: change.before.rawValue) ?? .pass,
            after: .init(rawValue: change.after.rawValue) ?? .pass,
            scoreBefore: change.scoreBefore,
            scoreAfter: change.scoreAfter,
            href: "/console/apps/\(appKey)/decisions/\(id)"
        )
    }
}
