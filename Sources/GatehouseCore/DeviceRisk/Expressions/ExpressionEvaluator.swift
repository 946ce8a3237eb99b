/// Why an evaluation produced no value (CEL's error value): a division by zero, an overflow, a fact
/// that is absent, operands of unlike types met at run time, the cost bound reached.
public struct EvaluationError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) { self.message = message }

    public var description: String { message }
}

/// The work one evaluation may still do (`ExpressionLimits.evaluationCost`).
struct EvaluationBudget {
    var remaining = ExpressionLimits.evaluationCost

    mutating func spend(_ cost: Int, building size: Int = 0) throws(EvaluationError) {
        remaining -= max(cost, 1)
        guard remaining >= 0 else { throw EvaluationError("the rule's cost bound was reached") }
        guard size <= ExpressionLimits.valueSize else { throw EvaluationError("a value larger than \(ExpressionLimits.valueSize) elements") }
    }
}

/// Evaluates a checked expression over the facts of one query. `&&` and `||` are CEL's: an operand
/// that decides the outcome (false for `&&`, true for `||`) wins over another's error, whatever their
/// order; `all` and `exists` likewise over a list's elements.
public enum ExpressionEvaluator {
    /// Compiles the expression and evaluates it once over these facts, as a rule's program evaluates
    /// on a query (a rule is compiled once, `CompiledRule.program`, and evaluated for each). Facts the
    /// layout does not name are not read.
    public static func evaluate(
        _ expression: RuleExpression,
        facts: [String: ExpressionValue],
        layout: FactLayout = RuleVariables.layout
    ) -> Result<ExpressionValue, EvaluationError> {
        var values = layout.values(facts)
        return ExpressionProgram(expression, layout: layout).evaluate(&values)
    }
}

/// One evaluation's state: the query's facts, the comprehensions' variables, the budget left.
struct ExpressionRun {
    var facts: FactValues
    /// The variable of each comprehension the evaluation is inside, outermost first.
    var locals: [ExpressionValue] = []
    var budget = EvaluationBudget()

    init(facts: FactValues) { self.facts = facts }

    /// An address as `ip()` takes it (`ExpressionFunctions.address`), parsed once for consecutive
    /// calls on the same text.
    mutating func address(_ text: String) throws(EvaluationError) -> IPAddress {
        if let parsed = facts.parsedAddress, parsed.text.utf8.elementsEqual(text.utf8) { return parsed.address }
        let address = try ExpressionFunctions.address(text)
        facts.parsedAddress = (text, address)
        return address
    }

    static func member(_ field: String, of operand: ExpressionValue) throws(EvaluationError) -> ExpressionValue? {
        switch operand {
        case .object(_, let fields): return fields[field]
        case .map(let map): return map[.string(field)]
        default: throw EvaluationError("no such overload: a field of \(operand.type)")
        }
    }

    mutating func comprehension(
        _ macro: RuleExpression.Macro,
        range: ExpressionValue,
        body: ExpressionNode
    ) throws(EvaluationError) -> ExpressionValue {
        guard case .list(let elements) = range else { throw EvaluationError("no such overload: a comprehension over \(range.type)") }
        var matched = 0
        var failure: EvaluationError?
        for element in elements {
            locals.append(element)
            defer { locals.removeLast() }
            do throws(EvaluationError) {
                guard case .bool(let holds) = try value(of: body) else { throw EvaluationError("a condition that is not a bool") }
                switch macro {
                case .all where !holds: return .bool(false)
                case .exists where holds: return .bool(true)
                default: if holds { matched += 1 }
                }
            } catch  where budget.remaining < 0 {
                throw error
            } catch {
                // Remembered, not thrown: a later element may still decide (CEL's commutative logic).
                if macro == .existsOne { throw error }
                failure = failure ?? error
            }
        }
        if let failure { throw failure }
        switch macro {
        case .all: return .bool(true)
        case .exists: return .bool(false)
        case .existsOne: return .bool(matched == 1)
        }
    }

    /// `&&` (decided by false) or `||` (decided by true) over every operand, left to right until one
    /// decides; an error stands only if none does.
    mutating func logical(decidedBy decisive: Bool, _ operands: NodeList) throws(EvaluationError) -> ExpressionValue {
        var failure: EvaluationError?
        for operand in operands.references {
            do throws(EvaluationError) {
                guard case .bool(let b) = try value(of: operand) else {
                    throw EvaluationError("no such overload: a logical operand that is not a bool")
                }
                if b == decisive { return .bool(decisive) }
            } catch  where budget.remaining < 0 {
                throw error
            } catch {
                failure = failure ?? error
            }
        }
        if let failure { throw failure }
        return .bool(!decisive)
    }
}
