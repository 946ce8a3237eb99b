/// The operators and calls of a compiled expression. Which one a call is, and the overloads that
/// could take it, are worked out when the rule is compiled; evaluation picks among those by the
/// values' types, as CEL does with `dyn`.
final class BinaryNode: ExpressionNode {
    enum Operator {
        case equal, notEqual, `in`, less, lessOrEqual, greater, greaterOrEqual
    }

    let operation: Operator
    let left: any ExpressionNode
    let right: any ExpressionNode
    /// The comparison's overloads, for operands that are not both ints.
    let overloads: OverloadSet
    init(_ operation: Operator, left: any ExpressionNode, right: any ExpressionNode, overloads: OverloadSet) {
        self.operation = operation
        self.left = left
        self.right = right
        self.overloads = overloads
    }

    func evaluate(_ run: inout ExpressionRun) throws(EvaluationError) -> ExpressionValue {
        let a = try run.value(of: left)
        let b = try run.value(of: right)
        switch operation {
        case .equal: return .bool(try ExpressionRun.equal(a, b))
        case .notEqual: return .bool(!(try ExpressionRun.equal(a, b)))
        case .in: return .bool(try run.contains(b, a))
        case .less, .lessOrEqual, .greater, .greaterOrEqual:
            guard case .int(let x) = a, case .int(let y) = b else { return try overloads.apply([a, b], &run) }
            switch operation {
            case .less: return .bool(x < y)
            case .lessOrEqual: return .bool(x <= y)
            case .greater: return .bool(x > y)
            default: return .bool(x >= y)
            }
        }
    }
}

/// `!`, `[]`, `size`, `dyn` and every function of `ExpressionFunctions`: the target (if any) and
/// the arguments are evaluated in order, then applied.
final class CallNode: ExpressionNode {
    enum Function {
        case not, index, size, dyn
        case overloaded(OverloadSet)
    }

    let function: Function
    /// The target first, when called as a method.
    let operands: [any ExpressionNode]
    init(_ function: Function, operands: [any ExpressionNode]) {
        self.function = function
        self.operands = operands
    }

    func evaluate(_ run: inout ExpressionRun) throws(EvaluationError) -> ExpressionValue {
        var values: [ExpressionValue] = []
        values.reserveCapacity(operands.count)
        for operand in operands { values.append(try run.value(of: operand)) }
        switch function {
        case .not:
            guard case .bool(let b) = values[0] else { throw EvaluationError("no such overload: !\(values[0].type)") }
            return .bool(!b)
        case .index: return try ExpressionRun.index(values[0], values[1])
        case .size: return try ExpressionRun.size(values[0])
        case .dyn: return values[0]
        case .overloaded(let overloads): return try overloads.apply(values, &run)
        }
    }
}

/// The overloads of one function that take its number of operands, called as it is called (a method
/// or not): the first whose parameters the values are of applies.
struct OverloadSet: Sendable {
    let function: String
    let candidates: [ExpressionOverload]

    init(_ function: String, member: Bool, operands: Int) {
        self.function = function
        candidates = (ExpressionFunctions.byName[function] ?? []).filter { $0.member == member && $0.parameters.count == operands }
    }

    func apply(_ values: [ExpressionValue], _ run: inout ExpressionRun) throws(EvaluationError) -> ExpressionValue {
        guard let overload = candidates.first(where: { zip($0.parameters, values).allSatisfy { $1.isOf($0) } }) else {
            let kinds = values.map(\.type.description).joined(separator: ", ")
            throw EvaluationError("found no matching overload for '\(function)' applied to (\(kinds))")
        }
        return try overload.apply(values, &run)
    }
}
