/// The operators and calls of a compiled expression. Which one a call is, and the overloads that
/// could take it, are worked out when the rule is compiled; evaluation picks among those by the
/// values' types, as CEL does with `dyn`.
final class BinaryNode: ExpressionNode {
    enum Operator {
        case equal, notEqual, `in`, less, lessOrEqual, greater, greaterOrEqual
    }

    let operation: Operator
    let left: ExpressionNode
    let right: ExpressionNode
    /// The comparison's overloads, for operands that are not both ints.
    let overloads: OverloadSet
    init(_ operation: Operator, left: ExpressionNode, right: ExpressionNode, overloads: OverloadSet) {
        self.operation = operation
        self.left = left
        self.right = right
        self.overloads = overloads
    }

    override func evaluate(_ run: inout ExpressionRun) throws(EvaluationError) -> ExpressionValue {
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
        case not, index, size, dyn, overloaded
    }

    let function: Function
    /// The target first, when called as a method.
    let operands: NodeList
    /// The function's overloads (none for the operations the evaluator does itself).
    let overloads: OverloadSet
    init(_ function: Function, operands: [ExpressionNode], overloads: OverloadSet) {
        self.function = function
        self.operands = NodeList(operands)
        self.overloads = overloads
    }

    deinit { operands.release() }

    override func evaluate(_ run: inout ExpressionRun) throws(EvaluationError) -> ExpressionValue {
        var values: [ExpressionValue] = []
        values.reserveCapacity(operands.count)
        for operand in operands.references { values.append(try run.value(of: operand)) }
        switch function {
        case .not:
            guard case .bool(let b) = values[0] else { throw EvaluationError("no such overload: !\(values[0].type)") }
            return .bool(!b)
        case .index: return try ExpressionRun.index(values[0], values[1])
        case .size: return try ExpressionRun.size(values[0])
        case .dyn: return values[0]
        case .overloaded: return try overloads.apply(values, &run)
        }
    }
}

/// The overloads of one function that take its number of operands, called as it is called (a method
/// or not): the first whose parameters the values are of applies. Held as plain values (the kinds of
/// the parameters and the implementation, which captures nothing), so that matching and calling one
/// writes to nothing the threads share (`ExpressionNode`).
final class OverloadSet: @unchecked Sendable {
    struct Candidate {
        let parameters: (ValueKind, ValueKind, ValueKind)
        let apply: ExpressionOverload.Apply
    }

    let function: String
    let candidates: UnsafeMutableBufferPointer<Candidate>

    init(_ function: String, member: Bool, operands: Int) {
        self.function = function
        let matching = (ExpressionFunctions.byName[function] ?? []).filter { $0.member == member && $0.parameters.count == operands }
        candidates = .allocate(capacity: matching.count)
        _ = candidates.initialize(
            from: matching.map { overload in
                precondition(overload.parameters.count <= 3, "an overload of more than three parameters")
                let kinds = overload.parameters.map(ValueKind.init) + [.any, .any, .any]
                return Candidate(parameters: (kinds[0], kinds[1], kinds[2]), apply: overload.apply)
            }
        )
    }

    deinit { candidates.deallocate() }

    func apply(_ values: [ExpressionValue], _ run: inout ExpressionRun) throws(EvaluationError) -> ExpressionValue {
        let first = values.count > 0 ? values[0].kind : .any
        let second = values.count > 1 ? values[1].kind : .any
        let third = values.count > 2 ? values[2].kind : .any
        for index in candidates.indices {
            let parameters = candidates[index].parameters
            guard parameters.0.takes(first), parameters.1.takes(second), parameters.2.takes(third) else { continue }
            return try candidates[index].apply(values, &run)
        }
        let shown = values.map(\.type.description).joined(separator: ", ")
        throw EvaluationError("found no matching overload for '\(function)' applied to (\(shown))")
    }
}

/// What kind of value a parameter takes, as `ExpressionType.fits` has it for a value's own type but
/// without building that type (a list's or map's is a heap box): any, or one kind; a list or map
/// whatever its elements. No overload takes a group of facts. `ExpressionValue.kind` is the value's.
enum ValueKind: UInt8 {
    case any, bool, int, double, string, null, timestamp, duration, ip, cidr, list, map, object

    init(_ type: ExpressionType) {
        switch type {
        case .dyn: self = .any
        case .bool: self = .bool
        case .int: self = .int
        case .double: self = .double
        case .string: self = .string
        case .null: self = .null
        case .timestamp: self = .timestamp
        case .duration: self = .duration
        case .ip: self = .ip
        case .cidr: self = .cidr
        case .list: self = .list
        case .map: self = .map
        case .object: self = .object
        }
    }

    func takes(_ kind: ValueKind) -> Bool { self == .any || self == kind }
}

extension ExpressionValue {
    var kind: ValueKind {
        switch self {
        case .bool: .bool
        case .int: .int
        case .double: .double
        case .string: .string
        case .null: .null
        case .timestamp: .timestamp
        case .duration: .duration
        case .ip: .ip
        case .cidr: .cidr
        case .list: .list
        case .map: .map
        case .object: .object
        }
    }
}

extension OverloadSet {
    private struct Key: Hashable {
        let function: String
        let member: Bool
        let operands: Int
    }

    /// One set for each function, way of calling it and number of operands, shared by every call of
    /// every rule: 200 rules' calls each with a set of their own spread the rules over more memory than a
    /// core's cache keeps between two queries.
    private static let shared: [Key: OverloadSet] = {
        var sets: [Key: OverloadSet] = [:]
        for overload in ExpressionFunctions.overloads {
            let key = Key(function: overload.name, member: overload.member, operands: overload.parameters.count)
            if sets[key] == nil { sets[key] = OverloadSet(key.function, member: key.member, operands: key.operands) }
        }
        return sets
    }()

    /// No overloads: the operations the evaluator does itself.
    static let none = OverloadSet("", member: false, operands: 0)

    /// The shared set, or, for a function with no overload taking this call (whose evaluation can only
    /// fail), one of its own that names it.
    static func named(_ function: String, member: Bool, operands: Int) -> OverloadSet {
        shared[Key(function: function, member: member, operands: operands)] ?? OverloadSet(function, member: member, operands: operands)
    }
}
