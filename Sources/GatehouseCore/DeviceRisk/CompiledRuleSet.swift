/// The rules that judge one event's queries, in the order they apply, walked without touching their
/// reference counts: every thread that judges the app's queries walks the same rules, and an array's
/// iteration would retain and release each (moving its cache line between cores; bench/micro's
/// "another thread judging" figures). `rules` keeps them alive for `references`.
public final class CompiledRuleSet: @unchecked Sendable {
    public let rules: [CompiledRule]
    let references: UnsafeMutableBufferPointer<Unmanaged<CompiledRule>>

    public init(_ rules: [CompiledRule]) {
        self.rules = rules
        references = .allocate(capacity: rules.count)
        _ = references.initialize(from: rules.map { Unmanaged.passUnretained($0) })
    }

    deinit { references.deallocate() }

    public var isEmpty: Bool { rules.isEmpty }

    /// Each rule's program over the query's facts, in order, with the rule's index for what holds or
    /// fails: `visit` is called for those only, so that a rule that does not hold is never copied out.
    func evaluate(_ facts: inout FactValues, visit: (Int, Result<ExpressionValue, EvaluationError>) -> Void) {
        for index in references.indices {
            let result = references[index]._withUnsafeGuaranteedRef { $0.program.evaluate(&facts) }
            if case .success(.bool(false)) = result { continue }
            visit(index, result)
        }
    }
}
