import Foundation

/// The app's risk policy as operators write it: thresholds, weights and cutoffs by scope, the lists,
/// and the fraud team's rules. Each change publishes the whole of it as a numbered `PolicyVersion`;
/// the risk queries judge with the newest, a decision records the one that judged it, a replay
/// re-judges history with any of them or with a proposed one.
public struct PolicyDocument: Equatable, Sendable {
    /// By scope: 0 for the app, else the event id.
    public var rules: [Int: RiskRules]
    public var lists: [RiskListEntry]
    public var policyRules: [PolicyRule]

    public init(rules: [Int: RiskRules], lists: [RiskListEntry], policyRules: [PolicyRule]) {
        self.rules = rules
        self.lists = lists
        self.policyRules = policyRules
    }

    public static let empty = PolicyDocument(rules: [:], lists: [], policyRules: [])

    /// The policy a query is judged with. A stored rule that no longer compiles (a later build that
    /// refuses what an earlier one took) judges nothing; `uncompiled` names it for the operators.
    public func policy(events: Set<Int>, attesters: [Attester], version: Int) -> RiskPolicy {
        RiskPolicy(
            rules: rules,
            listEntries: lists,
            events: events,
            attesters: attesters,
            compiledRules: policyRules.compactMap { try? $0.compiled() },
            version: version
        )
    }

    /// The rules that do not compile, each with Core's refusal.
    public var uncompiled: [(rule: String, error: String)] {
        policyRules.compactMap { rule in
            do throws(DomainError) {
                _ = try rule.compiled()
                return nil
            } catch {
                return (rule.name, error.detail)
            }
        }
    }
}

/// One published policy: its number (1, 2, ... per app), when and by whom, the change that
/// published it (an audit action such as `risk.rule.create` or `risk.policy.restore`), and the whole
/// policy as it stood after.
public struct PolicyVersion: Equatable, Sendable {
    public let number: Int
    public let publishedAt: Date
    public let publishedBy: String
    public let change: String
    public let document: PolicyDocument

    public init(number: Int, publishedAt: Date, publishedBy: String, change: String, document: PolicyDocument) {
        self.number = number
        self.publishedAt = publishedAt
        self.publishedBy = publishedBy
        self.change = change
        self.document = document
    }
}

/// A policy run in shadow beside the app's live one: every risk query is judged by both, the live
/// answer returned and the shadow's outcome stored with the decision.
public struct PolicyShadow: Equatable, Sendable {
    public let document: PolicyDocument
    /// The version it is, when it is one unchanged.
    public let version: Int?
    public let startedAt: Date
    public let startedBy: String

    public init(document: PolicyDocument, version: Int?, startedAt: Date, startedBy: String) {
        self.document = document
        self.version = version
        self.startedAt = startedAt
        self.startedBy = startedBy
    }
}
