extension Run {
    mutating func call(_ function: String, target: RuleExpression?, arguments: [RuleExpression]) throws(EvaluationError) -> ExpressionValue {
        switch function {
        case "_&&_", "_||_": return try logical(decidedBy: function == "_||_", arguments)
        case "_?_:_":
            guard case .bool(let condition) = try value(of: arguments[0]) else { throw EvaluationError("a condition that is not a bool") }
            return try value(of: arguments[condition ? 1 : 2])
        case "_==_", "_!=_", "@in", "_<_", "_<=_", "_>_", "_>=_":
            // The operators most rules are made of (always two operands, never a target), without the
            // argument array every other call builds: an allocation per operator per rule per query.
            guard target == nil, arguments.count == 2 else { break }
            return try binary(function, try value(of: arguments[0]), try value(of: arguments[1]))
        default: break
        }
        var values: [ExpressionValue] = []
        if let target { values.append(try value(of: target)) }
        for argument in arguments { values.append(try value(of: argument)) }
        switch function {
        case "!_":
            guard case .bool(let b) = values[0] else { throw EvaluationError("no such overload: !\(values[0].type)") }
            return .bool(!b)
        case "_[_]": return try index(values[0], values[1])
        case "size" where values.count == 1: return try size(values[0])
        case "dyn" where target == nil && values.count == 1: return values[0]
        default: return try overloaded(function, member: target != nil, values)
        }
    }

    /// `==`, `!=`, `in` and the comparisons; two ints compared here, anything else by its overload.
    mutating func binary(_ function: String, _ left: ExpressionValue, _ right: ExpressionValue) throws(EvaluationError) -> ExpressionValue {
        switch function {
        case "_==_": return .bool(try Self.equal(left, right))
        case "_!=_": return .bool(!(try Self.equal(left, right)))
        case "@in": return .bool(try contains(right, left))
        default:
            guard case .int(let a) = left, case .int(let b) = right else { return try overloaded(function, member: false, [left, right]) }
            switch function {
            case "_<_": return .bool(a < b)
            case "_<=_": return .bool(a <= b)
            case "_>_": return .bool(a > b)
            default: return .bool(a >= b)
            }
        }
    }

    /// The function's overload for these values (by their types), applied.
    mutating func overloaded(_ function: String, member: Bool, _ values: [ExpressionValue]) throws(EvaluationError) -> ExpressionValue {
        guard
            let overload = (ExpressionFunctions.byName[function] ?? []).first(where: {
                $0.member == member && $0.parameters.count == values.count && zip($0.parameters, values).allSatisfy { $1.isOf($0) }
            })
        else {
            let kinds = values.map(\.type.description).joined(separator: ", ")
            throw EvaluationError("found no matching overload for '\(function)' applied to (\(kinds))")
        }
        return try overload.apply(values, &budget)
    }

    /// `&&` (decided by false) or `||` (decided by true) over every operand, left to right until one
    /// decides; an error stands only if none does.
    mutating func logical(decidedBy decisive: Bool, _ operands: [RuleExpression]) throws(EvaluationError) -> ExpressionValue {
        var failure: EvaluationError?
        for operand in operands {
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

    /// `==` on values of one type; unlike types are no overload (as cel-python has it), not unequal.
    static func equal(_ left: ExpressionValue, _ right: ExpressionValue) throws(EvaluationError) -> Bool {
        switch (left, right) {
        case (.list(let a), .list(let b)):
            guard a.count == b.count else { return false }
            for (x, y) in zip(a, b) where !(try equal(x, y)) { return false }
            return true
        case (.map(let a), .map(let b)):
            guard a.count == b.count else { return false }
            for (key, x) in a {
                guard let y = b[key] else { return false }
                if !(try equal(x, y)) { return false }
            }
            return true
        default:
            guard left.type == right.type else {
                throw EvaluationError("found no matching overload for '_==_' applied to (\(left.type), \(right.type))")
            }
            return left == right
        }
    }

    mutating func contains(_ collection: ExpressionValue, _ element: ExpressionValue) throws(EvaluationError) -> Bool {
        switch collection {
        case .list(let elements):
            try budget.spend(elements.count)
            // An element of another type is not this one: `"a" in [1, "a"]` is true.
            return elements.contains { (try? Self.equal($0, element)) == true }
        case .map(let map):
            guard let key = element.mapKey else { return false }
            return map[key] != nil
        default: throw EvaluationError("found no matching overload for '@in' applied to \(collection.type)")
        }
    }

    func index(_ collection: ExpressionValue, _ key: ExpressionValue) throws(EvaluationError) -> ExpressionValue {
        switch (collection, key) {
        case (.list(let elements), .int(let i)):
            guard i >= 0, i < elements.count else { throw EvaluationError("index out of range: \(i)") }
            return elements[Int(i)]
        case (.map(let map), _):
            guard let mapKey = key.mapKey, let found = map[mapKey] else { throw EvaluationError("no such key") }
            return found
        case (.object, .string(let field)):
            guard let found = try member(field, of: collection) else { throw EvaluationError("no such key: '\(field)'") }
            return found
        default: throw EvaluationError("found no matching overload for '_[_]' applied to (\(collection.type), \(key.type))")
        }
    }

    func size(_ value: ExpressionValue) throws(EvaluationError) -> ExpressionValue {
        switch value {
        case .string(let s): .int(Int64(s.unicodeScalars.count))
        case .list(let l): .int(Int64(l.count))
        case .map(let m): .int(Int64(m.count))
        default: throw EvaluationError("found no matching overload for 'size' applied to \(value.type)")
        }
    }
}
