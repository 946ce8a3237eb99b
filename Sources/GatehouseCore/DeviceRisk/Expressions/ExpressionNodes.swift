/// A compiled expression's nodes (`ExpressionProgram` builds them from a checked tree). Each is a final
/// class that evaluates itself: a walk over an `indirect enum` retained and released every child it
/// took out of its parent, at every node of every rule of every query; a class's `let` children are
/// only borrowed. Names, slots and overloads are worked out once, when the rule is compiled.
protocol ExpressionNode: AnyObject, Sendable {
    func evaluate(_ run: inout ExpressionRun) throws(EvaluationError) -> ExpressionValue
}

extension ExpressionRun {
    /// Every node visited costs one step of the budget.
    mutating func value(of node: any ExpressionNode) throws(EvaluationError) -> ExpressionValue {
        try budget.spend(1)
        return try node.evaluate(&self)
    }
}

final class ConstantNode: ExpressionNode {
    let value: ExpressionValue
    init(_ value: ExpressionValue) { self.value = value }
    func evaluate(_ run: inout ExpressionRun) -> ExpressionValue { value }
}

/// A variable: its slot, or (`slot` nil) a name the layout does not hold, which has no value.
final class VariableNode: ExpressionNode {
    let name: String
    let slot: Int?
    init(name: String, slot: Int?) {
        self.name = name
        self.slot = slot
    }

    func evaluate(_ run: inout ExpressionRun) throws(EvaluationError) -> ExpressionValue {
        guard let slot, let value = run.facts.slots[slot] else { throw EvaluationError("no value for '\(name)'") }
        return value
    }
}

/// The variable of the comprehension `depth` levels out from the outermost.
final class LocalNode: ExpressionNode {
    let depth: Int
    init(depth: Int) { self.depth = depth }
    func evaluate(_ run: inout ExpressionRun) -> ExpressionValue { run.locals[depth] }
}

/// `variable.field` (or `has(variable.field)`) of a group of facts, read from the field's own slot. An
/// empty slot (the field is absent, or the variable's value is not a group) takes the general way.
final class FactFieldNode: ExpressionNode {
    let variable: VariableNode
    let field: String
    let slot: Int
    let test: Bool
    init(variable: VariableNode, field: String, slot: Int, test: Bool) {
        self.variable = variable
        self.field = field
        self.slot = slot
        self.test = test
    }

    func evaluate(_ run: inout ExpressionRun) throws(EvaluationError) -> ExpressionValue {
        // The two steps the tree has (the variable, then its field), so that the budget counts as it did.
        try run.budget.spend(1)
        let group = try variable.evaluate(&run)
        if let value = run.facts.slots[slot] { return test ? .bool(true) : value }
        return try SelectNode.select(field, of: group, test: test)
    }
}

/// `operand.field`, or `has(operand.field)`.
final class SelectNode: ExpressionNode {
    let operand: any ExpressionNode
    let field: String
    let test: Bool
    init(operand: any ExpressionNode, field: String, test: Bool) {
        self.operand = operand
        self.field = field
        self.test = test
    }

    func evaluate(_ run: inout ExpressionRun) throws(EvaluationError) -> ExpressionValue {
        try Self.select(field, of: try run.value(of: operand), test: test)
    }

    static func select(_ field: String, of operand: ExpressionValue, test: Bool) throws(EvaluationError) -> ExpressionValue {
        let found = try ExpressionRun.member(field, of: operand)
        if test { return .bool(found != nil) }
        guard let found else { throw EvaluationError("no such key: '\(field)'") }
        return found
    }
}

final class ListNode: ExpressionNode {
    let elements: [any ExpressionNode]
    init(_ elements: [any ExpressionNode]) { self.elements = elements }

    func evaluate(_ run: inout ExpressionRun) throws(EvaluationError) -> ExpressionValue {
        var values: [ExpressionValue] = []
        values.reserveCapacity(elements.count)
        for element in elements { values.append(try run.value(of: element)) }
        return .list(values)
    }
}

final class MapNode: ExpressionNode {
    let entries: [(key: any ExpressionNode, value: any ExpressionNode)]
    init(_ entries: [(key: any ExpressionNode, value: any ExpressionNode)]) { self.entries = entries }

    func evaluate(_ run: inout ExpressionRun) throws(EvaluationError) -> ExpressionValue {
        var map: [ExpressionValue.MapKey: ExpressionValue] = [:]
        for entry in entries {
            guard let key = try run.value(of: entry.key).mapKey else { throw EvaluationError("unsupported key type") }
            guard map[key] == nil else { throw EvaluationError("duplicate map key") }
            map[key] = try run.value(of: entry.value)
        }
        return .map(map)
    }
}

/// `range.all(variable, body)` and the other macros; the variable is `LocalNode(depth:)` in the body.
final class ComprehensionNode: ExpressionNode {
    let macro: RuleExpression.Macro
    let range: any ExpressionNode
    let body: any ExpressionNode
    init(macro: RuleExpression.Macro, range: any ExpressionNode, body: any ExpressionNode) {
        self.macro = macro
        self.range = range
        self.body = body
    }

    func evaluate(_ run: inout ExpressionRun) throws(EvaluationError) -> ExpressionValue {
        try run.comprehension(macro, range: try run.value(of: range), body: body)
    }
}

/// `&&` (decided by false) or `||` (decided by true) over its operands.
final class LogicalNode: ExpressionNode {
    let decisive: Bool
    let operands: [any ExpressionNode]
    init(decisive: Bool, operands: [any ExpressionNode]) {
        self.decisive = decisive
        self.operands = operands
    }

    func evaluate(_ run: inout ExpressionRun) throws(EvaluationError) -> ExpressionValue {
        try run.logical(decidedBy: decisive, operands)
    }
}

final class ConditionalNode: ExpressionNode {
    let condition: any ExpressionNode
    let then: any ExpressionNode
    let otherwise: any ExpressionNode
    init(condition: any ExpressionNode, then: any ExpressionNode, otherwise: any ExpressionNode) {
        self.condition = condition
        self.then = then
        self.otherwise = otherwise
    }

    func evaluate(_ run: inout ExpressionRun) throws(EvaluationError) -> ExpressionValue {
        guard case .bool(let holds) = try run.value(of: condition) else { throw EvaluationError("a condition that is not a bool") }
        return try run.value(of: holds ? then : otherwise)
    }
}
