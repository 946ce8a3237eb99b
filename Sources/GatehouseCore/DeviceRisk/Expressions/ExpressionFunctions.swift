/// The operators and functions the subset has besides those the checker and evaluator treat
/// themselves (`&&`, `||`, `!`, `?:`, `==`, `!=`, `in`, `[]`, `size`, `dyn`): each overload with its
/// parameter types and its implementation. No regular expressions: `matches` would backtrack.
struct ExpressionOverload: Sendable {
    typealias Apply = @Sendable ([ExpressionValue], inout ExpressionRun) throws(EvaluationError) -> ExpressionValue

    let name: String
    /// Called as `target.name(...)`; the target is the first parameter.
    let member: Bool
    let parameters: [ExpressionType]
    let result: ExpressionType
    let apply: Apply
}

enum ExpressionFunctions {
    static let overloads: [ExpressionOverload] = arithmetic + comparisons + strings + conversions + times + addresses

    /// The overloads by name: a rule's call looks among a handful, not all of them (a query may
    /// evaluate 200 rules).
    static let byName: [String: [ExpressionOverload]] = Dictionary(grouping: overloads, by: \.name)

    static func overload(
        _ name: String,
        _ parameters: [ExpressionType],
        _ result: ExpressionType,
        member: Bool = false,
        _ apply: @escaping ExpressionOverload.Apply
    )
        -> ExpressionOverload
    {
        ExpressionOverload(name: name, member: member, parameters: parameters, result: result, apply: apply)
    }

    static func overflow() -> EvaluationError { EvaluationError("return error for overflow") }

    static let arithmetic: [ExpressionOverload] = [
        overload("_+_", [.int, .int], .int) { v, _ throws(EvaluationError) in
            let (sum, over) = v[0].int.addingReportingOverflow(v[1].int)
            if over { throw overflow() }
            return .int(sum)
        },
        overload("_-_", [.int, .int], .int) { v, _ throws(EvaluationError) in
            let (difference, over) = v[0].int.subtractingReportingOverflow(v[1].int)
            if over { throw overflow() }
            return .int(difference)
        },
        overload("_*_", [.int, .int], .int) { v, _ throws(EvaluationError) in
            let (product, over) = v[0].int.multipliedReportingOverflow(by: v[1].int)
            if over { throw overflow() }
            return .int(product)
        },
        overload("_/_", [.int, .int], .int) { v, _ throws(EvaluationError) in
            guard v[1].int != 0 else { throw EvaluationError("divide by zero") }
            let (quotient, over) = v[0].int.dividedReportingOverflow(by: v[1].int)
            if over { throw overflow() }
            return .int(quotient)
        },
        overload("_%_", [.int, .int], .int) { v, _ throws(EvaluationError) in
            guard v[1].int != 0 else { throw EvaluationError("modulus by zero") }
            return .int(v[1].int == -1 ? 0 : v[0].int % v[1].int)
        },
        overload("-_", [.int], .int) { v, _ throws(EvaluationError) in
            guard v[0].int != .min else { throw overflow() }
            return .int(-v[0].int)
        },
        overload("_+_", [.double, .double], .double) { v, _ in .double(v[0].double + v[1].double) },
        overload("_-_", [.double, .double], .double) { v, _ in .double(v[0].double - v[1].double) },
        overload("_*_", [.double, .double], .double) { v, _ in .double(v[0].double * v[1].double) },
        overload("_/_", [.double, .double], .double) { v, _ in .double(v[0].double / v[1].double) },
        overload("-_", [.double], .double) { v, _ in .double(-v[0].double) },
        overload("_+_", [.string, .string], .string) { v, run throws(EvaluationError) in
            let joined = v[0].string + v[1].string
            try run.budget.spend(joined.unicodeScalars.count, building: joined.unicodeScalars.count)
            return .string(joined)
        },
        overload("_+_", [.list(.dyn), .list(.dyn)], .list(.dyn)) { v, run throws(EvaluationError) in
            let joined = v[0].list + v[1].list
            try run.budget.spend(joined.count, building: joined.count)
            return .list(joined)
        },
    ]

    /// Each implementation captures nothing (`OverloadSet` copies them on every call).
    static let comparisons: [ExpressionOverload] = [ExpressionType.bool, .int, .double, .string, .timestamp, .duration].flatMap { type in
        [
            overload("_<_", [type, type], .bool) { v, _ in .bool(ExpressionValue.order(v[0], v[1]).map { $0 < 0 } ?? false) },
            overload("_<=_", [type, type], .bool) { v, _ in .bool(ExpressionValue.order(v[0], v[1]).map { $0 <= 0 } ?? false) },
            overload("_>_", [type, type], .bool) { v, _ in .bool(ExpressionValue.order(v[0], v[1]).map { $0 > 0 } ?? false) },
            overload("_>=_", [type, type], .bool) { v, _ in .bool(ExpressionValue.order(v[0], v[1]).map { $0 >= 0 } ?? false) },
        ]
    }
}

extension ExpressionValue {
    /// -1, 0 or 1 for two values of one ordered type; nil when a double is NaN (every comparison false).
    static func order(_ left: ExpressionValue, _ right: ExpressionValue) -> Int? {
        func of<T: Comparable>(_ a: T, _ b: T) -> Int { a < b ? -1 : (a == b ? 0 : 1) }
        switch (left, right) {
        case (.bool(let a), .bool(let b)): return of(a ? 1 : 0, b ? 1 : 0)
        case (.int(let a), .int(let b)): return of(a, b)
        case (.double(let a), .double(let b)): return a.isNaN || b.isNaN ? nil : of(a, b)
        case (.string(let a), .string(let b)):
            // By code point, as CEL orders strings (Swift's own order is by grapheme).
            if a.unicodeScalars.elementsEqual(b.unicodeScalars) { return 0 }
            return a.unicodeScalars.lexicographicallyPrecedes(b.unicodeScalars) ? -1 : 1
        case (.timestamp(let a), .timestamp(let b)): return of(a, b)
        case (.duration(let a), .duration(let b)): return of(a, b)
        default: return nil
        }
    }

    // The payloads of values the checker has already typed; the evaluator checks kinds before calling.
    var int: Int64 { if case .int(let i) = self { i } else { 0 } }
    var double: Double { if case .double(let d) = self { d } else { 0 } }
    var string: String { if case .string(let s) = self { s } else { "" } }
    var list: [ExpressionValue] { if case .list(let l) = self { l } else { [] } }
}
