/// The operations on values the operators share: CEL's equality, membership, indexing and size.
extension ExpressionRun {
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

    static func index(_ collection: ExpressionValue, _ key: ExpressionValue) throws(EvaluationError) -> ExpressionValue {
        switch (collection, key) {
        case (.list(let elements), .int(let i)):
            guard i >= 0, i < elements.count else { throw EvaluationError("index out of range: \(i)") }
            return elements[Int(i)]
        case (.map(let map), _):
            guard let mapKey = key.mapKey, let found = map[mapKey] else { throw EvaluationError("no such key") }
            return found
        case (.object, .string(let field)):
            guard let found = try Self.member(field, of: collection) else { throw EvaluationError("no such key: '\(field)'") }
            return found
        default: throw EvaluationError("found no matching overload for '_[_]' applied to (\(collection.type), \(key.type))")
        }
    }

    static func size(_ value: ExpressionValue) throws(EvaluationError) -> ExpressionValue {
        switch value {
        case .string(let s): .int(Int64(s.unicodeScalars.count))
        case .list(let l): .int(Int64(l.count))
        case .map(let m): .int(Int64(m.count))
        default: throw EvaluationError("found no matching overload for 'size' applied to \(value.type)")
        }
    }
}
