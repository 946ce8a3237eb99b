/// The fraud team's rules over the built-in verdict: each rule in scope is evaluated over the query's
/// facts (which include the built-in tags and score); an enforced rule's tag adds its weight and an
/// enforced rule's decision takes its place in the order docs/risk.md gives; a monitored rule only
/// leaves its outcome. A rule whose evaluation fails applies nothing and leaves its error.
extension RiskEngine {
    public static func apply(
        _ rules: CompiledRuleSet,
        to builtIn: RiskVerdict,
        facts: [String: ExpressionValue],
        thresholds: EffectiveRiskRules
    ) -> RiskVerdict {
        var outcomes: [RuleOutcome] = []
        var tags = builtIn.tags
        var decided: RiskDecision?
        var values = RuleVariables.layout.values(facts)
        rules.evaluate(&values) { index, result in
            let rule = rules.rules[index].rule
            switch result {
            case .failure(let error):
                outcomes.append(RuleOutcome(rule: rule.name, mode: rule.mode, effect: rule.effectText, error: error.message))
                return
            case .success(let value):
                guard value == .bool(true) else { return }
            }
            outcomes.append(RuleOutcome(rule: rule.name, mode: rule.mode, effect: rule.effectText, error: nil))
            guard rule.mode == .enforce else { return }
            switch rule.then {
            case .tag(let tag, let weight): tags.append(TagHit(tag: tag, reason: "The rule \(rule.name) matched.", weight: weight))
            case .decide(let decision): decided = [decided, decision].compactMap { $0 }.max(by: { $0.severity < $1.severity })
            }
        }
        tags.sort { ($0.tag, $0.reason) < ($1.tag, $1.reason) }
        let kinds = Set(builtIn.tags.compactMap { RiskTag(rawValue: $0.tag) })
        var verdict = outcome(tags: tags, kinds: kinds, decided: decided, thresholds: thresholds)
        verdict.rules = outcomes
        return verdict
    }

    /// The decision from the tags: a bad token or a deny-list hit rejects whatever else; then an
    /// enforced rule's `reject`; the challenge list and a rule's `review` ask for a person (a reject
    /// when the score reaches it); a rule's `pass`; the allow list; then the score's thresholds.
    static func outcome(tags: [TagHit], kinds: Set<RiskTag>, decided: RiskDecision?, thresholds: EffectiveRiskRules) -> RiskVerdict {
        if kinds.contains(where: \.forcesReject) { return RiskVerdict(decision: .reject, score: 100, tags: tags) }
        let score = min(100, tags.reduce(0) { $0 + $1.weight })
        if decided == .reject { return RiskVerdict(decision: .reject, score: score, tags: tags) }
        if kinds.contains(.challengeListed) || decided == .review {
            return RiskVerdict(decision: score >= thresholds.rejectAt ? .reject : .review, score: score, tags: tags)
        }
        if decided == .pass { return RiskVerdict(decision: .pass, score: score, tags: tags) }
        if kinds.contains(.allowListed) { return RiskVerdict(decision: .pass, score: 0, tags: tags) }
        let decision: RiskDecision = score >= thresholds.rejectAt ? .reject : score >= thresholds.reviewAt ? .review : .pass
        return RiskVerdict(decision: decision, score: score, tags: tags)
    }
}

extension RiskDecision {
    /// `reject` over `review` over `pass`, when rules decide differently.
    var severity: Int {
        switch self {
        case .pass: 0
        case .review: 1
        case .reject: 2
        }
    }
}
