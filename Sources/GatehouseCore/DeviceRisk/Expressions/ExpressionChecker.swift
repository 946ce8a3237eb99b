/// Types an expression against its environment before it is saved, as CEL's checker does: every name
/// declared, every field of a group of facts known, every operator and function given operands of
/// types it takes (no implicit conversion: `1 + 1.0` and `1 == 1.0` are refused, as `1 < "a"`).
/// What passes here can fail only on values (a division by zero, an absent fact, an overflow).
public enum ExpressionChecker {
    /// The expression's type, or why it is refused and where.
    public static func check(_ expression: RuleExpression, in environment: ExpressionEnvironment) throws(ExpressionRefusal) -> ExpressionType {
        var scope = Scope(environment: environment)
        return try scope.type(of: expression)
    }
}

private struct Scope {
    let environment: ExpressionEnvironment
    /// The variables of the comprehensions the walk is inside, innermost last.
    var bound: [(name: String, type: ExpressionType)] = []

    init(environment: ExpressionEnvironment) { self.environment = environment }

    mutating func type(of expression: RuleExpression) throws(ExpressionRefusal) -> ExpressionType {
        switch expression {
        case .literal(let literal, _):
            switch literal {
            case .bool: return .bool
            case .int: return .int
            case .double: return .double
            case .string: return .string
            case .null: return .null
            }
        case .constant(let value, _): return value.type
        case .identifier(let name, let position):
            if let local = bound.last(where: { $0.name == name }) { return local.type }
            guard let type = environment.variables[name] else {
                throw ExpressionRefusal(.unknownVariable, at: position, "undeclared reference to '\(name)'")
            }
            return type
        case .select(let operand, let field, let test, let position):
            let operandType = try type(of: operand)
            let fieldType = try self.field(field, of: operandType, at: position)
            return test ? .bool : fieldType
        case .list(let elements, _):
            var element: ExpressionType? = nil
            for item in elements {
                let itemType = try type(of: item)
                element = element.map { $0.joined(with: itemType) ?? .dyn } ?? itemType
            }
            return .list(element ?? .dyn)
        case .map(let entries, _):
            return try mapType(entries)
        case .comprehension(_, let range, let variable, let body, let position):
            let element: ExpressionType
            switch try type(of: range) {
            case .list(let e): element = e
            case .dyn: element = .dyn
            case let other: throw ExpressionRefusal(.type, at: position, "all() and exists() range over a list, not \(other)")
            }
            bound.append((variable, element))
            defer { bound.removeLast() }
            let bodyType = try type(of: body)
            guard bodyType.fits(.bool) else { throw ExpressionRefusal(.type, at: body.position, "a condition (bool), not \(bodyType)") }
            return .bool
        case .call(let function, let target, let arguments, let position):
            var types: [ExpressionType] = []
            if let target { types.append(try type(of: target)) }
            for argument in arguments { types.append(try type(of: argument)) }
            return try call(function, member: target != nil, types, arguments: (target.map { [$0] } ?? []) + arguments, at: position)
        }
    }

    /// A map literal's type: its keys' and values' common types (`dyn` where they differ).
    mutating func mapType(_ entries: [(key: RuleExpression, value: RuleExpression)]) throws(ExpressionRefusal) -> ExpressionType {
        var key: ExpressionType? = nil
        var value: ExpressionType? = nil
        for entry in entries {
            let keyType = try type(of: entry.key)
            guard [.bool, .int, .string, .dyn].contains(keyType) else {
                throw ExpressionRefusal(.type, at: entry.key.position, "a map key is a bool, an int or a string, not \(keyType)")
            }
            let valueType = try type(of: entry.value)
            key = key.map { $0.joined(with: keyType) ?? .dyn } ?? keyType
            value = value.map { $0.joined(with: valueType) ?? .dyn } ?? valueType
        }
        return .map(key: key ?? .dyn, value: value ?? .dyn)
    }

    func field(_ name: String, of type: ExpressionType, at position: SourcePosition) throws(ExpressionRefusal) -> ExpressionType {
        switch type {
        case .object(let object):
            guard let field = environment.objects[object]?[name] else {
                throw ExpressionRefusal(.unknownVariable, at: position, "\(object) has no field '\(name)'")
            }
            return field.type
        case .map(let key, let value):
            guard key.fits(.string) else { throw ExpressionRefusal(.type, at: position, "a field of a map keyed by \(key)") }
            return value
        case .dyn: return .dyn
        default: throw ExpressionRefusal(.type, at: position, "a field of a map or of a group of facts, not of \(type)")
        }
    }

    func call(
        _ function: String,
        member: Bool,
        _ types: [ExpressionType],
        arguments: [RuleExpression],
        at position: SourcePosition
    ) throws(ExpressionRefusal) -> ExpressionType {
        func refuse(_ message: String) -> ExpressionRefusal { ExpressionRefusal(.type, at: position, message) }
        let shown = types.map(\.description).joined(separator: ", ")
        switch function {
        case "_&&_", "_||_", "!_":
            for (index, type) in types.enumerated() where !type.fits(.bool) {
                throw ExpressionRefusal(.type, at: arguments[index].position, "a condition (bool), not \(type)")
            }
            return .bool
        case "_?_:_":
            guard types[0].fits(.bool) else { throw ExpressionRefusal(.type, at: arguments[0].position, "a condition (bool), not \(types[0])") }
            guard let joined = types[1].joined(with: types[2]) else {
                throw refuse("both branches of the same type, not \(types[1]) and \(types[2])")
            }
            return joined
        case "_==_", "_!=_":
            guard types[0].joined(with: types[1]) != nil else { throw refuse("operands of the same type, not \(shown)") }
            return .bool
        case "@in":
            switch types[1] {
            case .list(let element) where element.fits(types[0]): return .bool
            case .map(let key, _) where key.fits(types[0]): return .bool
            case .dyn: return .bool
            default: throw refuse("an element in a list of its type, or a key in a map, not \(shown)")
            }
        case "_[_]":
            switch types[0] {
            case .list(let element) where types[1].fits(.int): return element
            case .map(let key, let value) where key.fits(types[1]): return value
            case .dyn: return .dyn
            default: throw refuse("a list by an int or a map by its key, not \(shown)")
            }
        case "size" where types.count == 1:
            guard [.string, .dyn].contains(types[0]) || types[0].fits(.list(.dyn)) || types[0].fits(.map(key: .dyn, value: .dyn)) else {
                throw refuse("size() of a string, a list or a map, not \(types[0])")
            }
            return .int
        case "dyn" where !member && types.count == 1:
            return .dyn
        default:
            let candidates = (ExpressionFunctions.byName[function] ?? []).filter { $0.member == member }
            guard !candidates.isEmpty else {
                throw ExpressionRefusal(.unknownFunction, at: position, "undeclared reference to '\(function)'\(member ? " (as a method)" : "")")
            }
            let matching = candidates.filter { $0.parameters.count == types.count && zip($0.parameters, types).allSatisfy { $1.fits($0) } }
            guard let first = matching.first else { throw refuse("no overload of '\(function)' takes (\(shown))") }
            return matching.allSatisfy { $0.result == first.result } ? first.result : .dyn
        }
    }
}
