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
    public static func evaluate(_ expression: RuleExpression, facts: [String: ExpressionValue]) -> Result<ExpressionValue, EvaluationError> {
        var run = Run(facts: facts)
        do {
            return .success(try run.value(of: expression))
        } catch {
            return .failure(error)
        }
    }
}

struct Run {
    let facts: [String: ExpressionValue]
    var locals: [(name: String, value: ExpressionValue)] = []
    var budget = EvaluationBudget()

    init(facts: [String: ExpressionValue]) { self.facts = facts }

    mutating func value(of expression: RuleExpression) throws(EvaluationError) -> ExpressionValue {
        try budget.spend(1)
        switch expression {
        case .literal(let literal, _):
            switch literal {
            case .bool(let b): return .bool(b)
            case .int(let i): return .int(i)
            case .double(let d): return .double(d)
            case .string(let s): return .string(s)
            case .null: return .null
            }
        case .constant(let value, _): return value
        case .identifier(let name, _):
            if let local = locals.last(where: { $0.name == name }) { return local.value }
            guard let fact = facts[name] else { throw EvaluationError("no value for '\(name)'") }
            return fact
        case .select(let operand, let field, let test, _):
            let found = try member(field, of: try value(of: operand))
            if test { return .bool(found != nil) }
            guard let found else { throw EvaluationError("no such key: '\(field)'") }
            return found
        case .list(let elements, _):
            var values: [ExpressionValue] = []
            for element in elements { values.append(try value(of: element)) }
            return .list(values)
        case .map(let entries, _):
            var map: [ExpressionValue.MapKey: ExpressionValue] = [:]
            for entry in entries {
                guard let key = try value(of: entry.key).mapKey else { throw EvaluationError("unsupported key type") }
                guard map[key] == nil else { throw EvaluationError("duplicate map key") }
                map[key] = try value(of: entry.value)
            }
            return .map(map)
        case .comprehension(let macro, let range, let variable, let body, _):
            return try comprehension(macro, range: try value(of: range), variable: variable, body: body)
        case .call(let function, let target, let arguments, _):
            return try call(function, target: target, arguments: arguments)
        }
    }

    func member(_ field: String, of operand: ExpressionValue) throws(EvaluationError) -> ExpressionValue? {
        switch operand {
        case .object(_, let fields): return fields[field]
        case .map(let map): return map[.string(field)]
        default: throw EvaluationError("no such overload: a field of \(operand.type)")
        }
    }

    mutating func comprehension(
        _ macro: RuleExpression.Macro,
        range: ExpressionValue,
        variable: String,
        body: RuleExpression
    ) throws(EvaluationError) -> ExpressionValue {
        guard case .list(let elements) = range else { throw EvaluationError("no such overload: a comprehension over \(range.type)") }
        var matched = 0
        var failure: EvaluationError?
        for element in elements {
            locals.append((variable, element))
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
}
