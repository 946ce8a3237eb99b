import Foundation

/// A rule a fraud team writes: when its expression holds for a query's facts, it adds a tag with a
/// weight or decides. In `monitor` it is evaluated and what it would have done is stored with the
/// decision, never applied. Its scope is the app's every event, or one event.
public struct PolicyRule: Sendable, Equatable {
    public enum Effect: Sendable, Equatable {
        /// A tag of the rule's own (`rule.` and a name), adding its weight to the score.
        case tag(String, weight: Int)
        /// At least this outcome (`reject` over `review` over `pass`; docs/risk.md gives the order).
        case decide(RiskDecision)
    }

    public enum Mode: String, Sendable, CaseIterable, Codable {
        case enforce, monitor
    }

    public let name: String
    public let when: String
    public let then: Effect
    public let mode: Mode
    /// Nil for every event of the app.
    public let eventID: EventID?

    /// A rule as stored; `compiled()` checks it again before it judges anything.
    public init(name: String, when: String, then: Effect, mode: Mode, eventID: EventID?) {
        self.name = name
        self.when = when
        self.then = then
        self.mode = mode
        self.eventID = eventID
    }

    /// The rule parsed and checked, as `validated` does it.
    public func compiled() throws(DomainError) -> CompiledRule {
        try Self.validated(name: name, when: when, then: then, mode: mode, eventID: eventID)
    }

    /// Rules an app may have at most: the bound on each query's evaluation work, with each
    /// expression's own cost bound.
    public static let maximumPerApp = 200

    /// A rule as an operator gave it, checked as it will be evaluated: a name of lowercase letters,
    /// digits and `_.-`, a tag that starts with `rule.`, a weight from 0 to 100, and an expression that
    /// parses and checks as a condition over `RuleVariables` (else the refusal's `line:column`).
    public static func validated(name: String, when: String, then: Effect, mode: Mode, eventID: EventID?) throws(DomainError) -> CompiledRule {
        guard (1...64).contains(name.utf8.count), name.utf8.allSatisfy({ Self.nameBytes.contains($0) }) else {
            throw DomainError(.invalidPolicyRule, "A rule's name is 1 to 64 of a-z, 0-9, '_', '.', '-'.", field: "name")
        }
        if case .tag(let tag, let weight) = then {
            guard tag.hasPrefix("rule."), (6...64).contains(tag.utf8.count), tag.utf8.allSatisfy({ Self.nameBytes.contains($0) }) else {
                throw DomainError(.invalidPolicyRule, "A rule's tag starts with 'rule.', such as rule.new_device_payment.", field: "then.tag")
            }
            guard (0...100).contains(weight) else { throw DomainError(.invalidPolicyRule, "A tag's weight is 0 to 100.", field: "then.weight") }
        }
        let rule = PolicyRule(name: name, when: when, then: then, mode: mode, eventID: eventID)
        do throws(ExpressionRefusal) {
            let expression = try ExpressionParser.parse(when)
            let type = try ExpressionChecker.check(expression, in: RuleVariables.environment)
            guard type.fits(.bool) else {
                throw ExpressionRefusal(.type, at: expression.position, "a condition (bool), not \(type)")
            }
            return CompiledRule(rule: rule, expression: ExpressionFolding.fold(expression))
        } catch {
            throw DomainError(.invalidPolicyRule, "\(error.position): \(error.message) (\(error.kind.rawValue))", field: "when")
        }
    }

    static let nameBytes = Set(Array("abcdefghijklmnopqrstuvwxyz0123456789_.-".utf8))

    /// What the effect is, in the words an operator reads in a decision: `tag rule.x +40`, `decide review`.
    public var effectText: String {
        switch then {
        case .tag(let tag, let weight): "tag \(tag) +\(weight)"
        case .decide(let decision): "decide \(decision.rawValue)"
        }
    }
}

/// A rule with its expression parsed and checked: the form the policy keeps, so that a query
/// evaluates and never parses.
///
/// A class: the risk query walks an app's rules for every query, and copying a struct of the rule's
/// strings and tree retained each of them (a measured cost with 200 rules, docs/PERFORMANCE.md).
public final class CompiledRule: Sendable, Equatable {
    public let rule: PolicyRule
    /// The checked tree, with its constant calls folded.
    public let expression: RuleExpression
    /// The tree compiled against `RuleVariables.layout`: what a query evaluates.
    public let program: ExpressionProgram

    init(rule: PolicyRule, expression: RuleExpression) {
        self.rule = rule
        self.expression = expression
        program = ExpressionProgram(expression, layout: RuleVariables.layout)
    }

    public static func == (left: CompiledRule, right: CompiledRule) -> Bool {
        left.rule == right.rule && left.expression == right.expression
    }
}

/// What one rule did to one decision: it matched (and applied, or would have in monitor), or its
/// evaluation failed (a rule that fails applies nothing). Rules that did not match leave no outcome.
public struct RuleOutcome: Sendable, Equatable, Codable {
    public let rule: String
    public let mode: PolicyRule.Mode
    /// The effect as `PolicyRule.effectText` says it.
    public let effect: String
    /// Nil when it matched; else why its evaluation failed.
    public let error: String?

    public init(rule: String, mode: PolicyRule.Mode, effect: String, error: String?) {
        self.rule = rule
        self.mode = mode
        self.effect = effect
        self.error = error
    }
}
