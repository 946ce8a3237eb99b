/// Works out once, when a rule is compiled, the calls whose value cannot change from one query to the
/// next: a constructor of a pure type on literals (`cidr("10.0.0.0/8")`, `ip("::1")`,
/// `duration("1h")`, `timestamp("2026-01-01T00:00:00Z")`). Profiled, the 200 rules of `bench/run`
/// spent a quarter of their time parsing the same network literals on every query
/// (docs/PERFORMANCE.md). A call that fails is left as it is, so that it fails at evaluation with the
/// error it always had.
public enum ExpressionFolding {
    static let pureOnLiterals: Set<String> = ["cidr", "ip", "duration", "timestamp"]

    public static func fold(_ expression: RuleExpression) -> RuleExpression {
        switch expression {
        case .literal, .identifier, .constant: return expression
        case .select(let operand, let field, let test, let position):
            return .select(fold(operand), field: field, test: test, position)
        case .call(let function, let target, let arguments, let position):
            let folded = RuleExpression.call(function: function, target: target.map(fold), arguments: arguments.map(fold), position)
            let literal = arguments.allSatisfy { if case .literal(.string, _) = $0 { true } else { false } }
            guard target == nil, pureOnLiterals.contains(function), literal, !arguments.isEmpty,
                case .success(let value) = ExpressionEvaluator.evaluate(folded, facts: [:])
            else { return folded }
            return .constant(value, position)
        case .list(let elements, let position): return .list(elements.map(fold), position)
        case .map(let entries, let position): return .map(entries.map { (fold($0.key), fold($0.value)) }, position)
        case .comprehension(let macro, let range, let variable, let body, let position):
            return .comprehension(macro, range: fold(range), variable: variable, body: fold(body), position)
        }
    }
}
