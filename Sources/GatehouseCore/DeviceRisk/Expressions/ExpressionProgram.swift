/// A checked expression compiled for evaluation: its tree turned into `ExpressionNode`s, with each
/// name resolved to a fact's slot (`FactLayout`) or a comprehension's variable, and each call to its
/// operation and the overloads that could take it. A rule is compiled once; a query evaluates it.
public final class ExpressionProgram: Sendable {
    let root: ExpressionNode

    public init(_ expression: RuleExpression, layout: FactLayout) {
        var compiler = ExpressionCompiler(layout: layout)
        root = compiler.node(expression)
    }

    /// The expression's value over one query's facts, or why it has none. Each evaluation has its own
    /// budget (`ExpressionLimits.evaluationCost`); `facts` keeps what it parsed for the next rule.
    public func evaluate(_ facts: inout FactValues) -> Result<ExpressionValue, EvaluationError> {
        var run = ExpressionRun(facts: facts)
        defer { facts = run.facts }
        do {
            return .success(try run.value(of: root))
        } catch {
            return .failure(error)
        }
    }
}

private struct ExpressionCompiler {
    let layout: FactLayout
    /// The variables of the comprehensions the walk is inside, outermost first.
    var bound: [String] = []

    init(layout: FactLayout) { self.layout = layout }

    mutating func node(_ expression: RuleExpression) -> ExpressionNode {
        switch expression {
        case .literal(let literal, _):
            switch literal {
            case .bool(let b): return ConstantNode(.bool(b))
            case .int(let i): return ConstantNode(.int(i))
            case .double(let d): return ConstantNode(.double(d))
            case .string(let s): return ConstantNode(.string(s))
            case .null: return ConstantNode(.null)
            }
        case .constant(let value, _): return ConstantNode(value)
        case .identifier(let name, _): return variable(name)
        case .select(.identifier(let name, _), let field, let test, _):
            // A field of a group of facts, unless a comprehension's variable hides the group.
            let operand = variable(name)
            if let variable = operand as? VariableNode, let slot = layout.fields[name]?[field] {
                return FactFieldNode(variable: variable, field: field, slot: slot, test: test)
            }
            return SelectNode(operand: operand, field: field, test: test)
        case .select(let operand, let field, let test, _):
            return SelectNode(operand: node(operand), field: field, test: test)
        case .list(let elements, _): return ListNode(elements.map { node($0) })
        case .map(let entries, _): return MapNode(entries.map { (node($0.key), node($0.value)) })
        case .comprehension(let macro, let range, let variable, let body, _):
            let rangeNode = node(range)
            bound.append(variable)
            defer { bound.removeLast() }
            return ComprehensionNode(macro: macro, range: rangeNode, body: node(body))
        case .call(let function, let target, let arguments, _):
            return call(function, target: target, arguments: arguments)
        }
    }

    func variable(_ name: String) -> ExpressionNode {
        if let depth = bound.lastIndex(of: name) { return LocalNode(depth: depth) }
        return VariableNode(name: name, slot: layout.variables[name])
    }

    mutating func call(_ function: String, target: RuleExpression?, arguments: [RuleExpression]) -> ExpressionNode {
        let binary: [String: BinaryNode.Operator] = [
            "_==_": .equal, "_!=_": .notEqual, "@in": .in, "_<_": .less, "_<=_": .lessOrEqual, "_>_": .greater, "_>=_": .greaterOrEqual,
        ]
        switch function {
        case "_&&_", "_||_": return LogicalNode(decisive: function == "_||_", operands: arguments.map { node($0) })
        case "_?_:_": return ConditionalNode(condition: node(arguments[0]), then: node(arguments[1]), otherwise: node(arguments[2]))
        default: break
        }
        if let operation = binary[function], target == nil, arguments.count == 2 {
            let overloads = OverloadSet.named(function, member: false, operands: 2)
            return BinaryNode(operation, left: node(arguments[0]), right: node(arguments[1]), overloads: overloads)
        }
        let operands = (target.map { [node($0)] } ?? []) + arguments.map { node($0) }
        let compiled: CallNode.Function
        switch function {
        case "!_": compiled = .not
        case "_[_]": compiled = .index
        case "size" where operands.count == 1: compiled = .size
        case "dyn" where target == nil && operands.count == 1: compiled = .dyn
        default: compiled = .overloaded
        }
        let overloads = compiled == .overloaded ? OverloadSet.named(function, member: target != nil, operands: operands.count) : .none
        return CallNode(compiled, operands: operands, overloads: overloads)
    }
}
