/// A compiled expression's node (`ExpressionProgram` builds them from a checked tree): each kind is a
/// final subclass that evaluates itself. A walk over an `indirect enum` retained and released every
/// child it took out of its parent. Nodes are shared by every thread that judges the app's queries, so
/// each of those reference counts moved the node's cache line from one core to the other: evaluation
/// writes nothing to a node (children are `let`, lists `NodeList`), and names, slots and overloads are
/// worked out once, when the rule is compiled. bench/micro measures it with a second thread judging.
class ExpressionNode: @unchecked Sendable {
    func evaluate(_ run: inout ExpressionRun) throws(EvaluationError) -> ExpressionValue {
        preconditionFailure("every kind of node evaluates itself")
    }
}

/// A node's operands, walked without touching their reference counts: iterating an array of nodes
/// retains and releases each one (and the array), and the nodes are shared between threads. The list
/// holds each operand once (retained when made, released by `release()`, which the node that holds
/// the list calls when it goes).
struct NodeList {
    let references: UnsafeMutableBufferPointer<Unmanaged<ExpressionNode>>

    init(_ nodes: [ExpressionNode]) {
        references = .allocate(capacity: nodes.count)
        _ = references.initialize(from: nodes.map { Unmanaged.passRetained($0) })
    }

    var count: Int { references.count }

    func release() {
        for reference in references { reference.release() }
        references.deallocate()
    }
}

extension ExpressionRun {
    /// Every node visited costs one step of the budget.
    mutating func value(of node: ExpressionNode) throws(EvaluationError) -> ExpressionValue {
        try budget.spend(1)
        return try node.evaluate(&self)
    }

    /// The same for a node of a `NodeList`, borrowed.
    mutating func value(of reference: Unmanaged<ExpressionNode>) throws(EvaluationError) -> ExpressionValue {
        try budget.spend(1)
        let result = reference._withUnsafeGuaranteedRef { node in
            Result { () throws(EvaluationError) in try node.evaluate(&self) }
        }
        return try result.get()
    }
}

final class ConstantNode: ExpressionNode {
    let value: ExpressionValue
    init(_ value: ExpressionValue) { self.value = value }
    override func evaluate(_ run: inout ExpressionRun) -> ExpressionValue { value }
}

/// A variable: its slot, or (`slot` nil) a name the layout does not hold, which has no value.
final class VariableNode: ExpressionNode {
    let name: String
    let slot: Int?
    init(name: String, slot: Int?) {
        self.name = name
        self.slot = slot
    }

    override func evaluate(_ run: inout ExpressionRun) throws(EvaluationError) -> ExpressionValue {
        guard let slot, let value = run.facts.slots[slot] else { throw EvaluationError("no value for '\(name)'") }
        return value
    }
}

/// The variable of the comprehension `depth` levels out from the outermost.
final class LocalNode: ExpressionNode {
    let depth: Int
    init(depth: Int) { self.depth = depth }
    override func evaluate(_ run: inout ExpressionRun) -> ExpressionValue { run.locals[depth] }
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

    override func evaluate(_ run: inout ExpressionRun) throws(EvaluationError) -> ExpressionValue {
        // The two steps the tree has (the variable, then its field), so that the budget counts as it did.
        try run.budget.spend(1)
        // A filled field's slot means its group is there too (`FactLayout.values` fills both).
        if let value = run.facts.slots[slot] { return test ? .bool(true) : value }
        return try SelectNode.select(field, of: try variable.evaluate(&run), test: test)
    }
}

/// `operand.field`, or `has(operand.field)`.
final class SelectNode: ExpressionNode {
    let operand: ExpressionNode
    let field: String
    let test: Bool
    init(operand: ExpressionNode, field: String, test: Bool) {
        self.operand = operand
        self.field = field
        self.test = test
    }

    override func evaluate(_ run: inout ExpressionRun) throws(EvaluationError) -> ExpressionValue {
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
    let elements: NodeList
    init(_ elements: [ExpressionNode]) { self.elements = NodeList(elements) }
    deinit { elements.release() }

    override func evaluate(_ run: inout ExpressionRun) throws(EvaluationError) -> ExpressionValue {
        var values: [ExpressionValue] = []
        values.reserveCapacity(elements.count)
        for element in elements.references { values.append(try run.value(of: element)) }
        return .list(values)
    }
}

final class MapNode: ExpressionNode {
    let keys: NodeList
    let values: NodeList
    init(_ entries: [(key: ExpressionNode, value: ExpressionNode)]) {
        keys = NodeList(entries.map(\.key))
        values = NodeList(entries.map(\.value))
    }

    deinit {
        keys.release()
        values.release()
    }

    override func evaluate(_ run: inout ExpressionRun) throws(EvaluationError) -> ExpressionValue {
        var map: [ExpressionValue.MapKey: ExpressionValue] = [:]
        for (key, value) in zip(keys.references, values.references) {
            guard let key = try run.value(of: key).mapKey else { throw EvaluationError("unsupported key type") }
            guard map[key] == nil else { throw EvaluationError("duplicate map key") }
            map[key] = try run.value(of: value)
        }
        return .map(map)
    }
}

/// `range.all(variable, body)` and the other macros; the variable is `LocalNode(depth:)` in the body.
final class ComprehensionNode: ExpressionNode {
    let macro: RuleExpression.Macro
    let range: ExpressionNode
    let body: ExpressionNode
    init(macro: RuleExpression.Macro, range: ExpressionNode, body: ExpressionNode) {
        self.macro = macro
        self.range = range
        self.body = body
    }

    override func evaluate(_ run: inout ExpressionRun) throws(EvaluationError) -> ExpressionValue {
        try run.comprehension(macro, range: try run.value(of: range), body: body)
    }
}

/// `&&` (decided by false) or `||` (decided by true) over its operands.
final class LogicalNode: ExpressionNode {
    let decisive: Bool
    let operands: NodeList
    init(decisive: Bool, operands: [ExpressionNode]) {
        self.decisive = decisive
        self.operands = NodeList(operands)
    }

    deinit { operands.release() }

    override func evaluate(_ run: inout ExpressionRun) throws(EvaluationError) -> ExpressionValue {
        try run.logical(decidedBy: decisive, operands)
    }
}

final class ConditionalNode: ExpressionNode {
    let condition: ExpressionNode
    let then: ExpressionNode
    let otherwise: ExpressionNode
    init(condition: ExpressionNode, then: ExpressionNode, otherwise: ExpressionNode) {
        self.condition = condition
        self.then = then
        self.otherwise = otherwise
    }

    override func evaluate(_ run: inout ExpressionRun) throws(EvaluationError) -> ExpressionValue {
        guard case .bool(let holds) = try run.value(of: condition) else { throw EvaluationError("a condition that is not a bool") }
        return try run.value(of: holds ? then : otherwise)
    }
}
