/// Where each fact sits when an expression is evaluated: every variable, and every field of a variable
/// that is a group of facts (`device.known`), has a slot of its own. A compiled expression reads
/// `device.known` from its slot; looking it up by name, twice, in each of 200 rules for every query
/// was the larger part of their cost (docs/PERFORMANCE.md).
public struct FactLayout: Sendable {
    let variables: [String: Int]
    /// The fields' slots of each variable that is a group of facts.
    let fields: [String: [String: Int]]
    let count: Int

    /// The layout of every variable and field the environment declares (the one rules compile against).
    public init(_ environment: ExpressionEnvironment) {
        self.init(
            environment.variables.map { name, type in
                guard case .object(let object) = type else { return (name, []) }
                return (name, environment.objects[object].map { Array($0.keys) } ?? [])
            }
        )
    }

    /// The layout of whatever these facts hold (an expression evaluated once, over given facts).
    init(of facts: [String: ExpressionValue]) {
        self.init(
            facts.map { name, value in
                guard case .object(_, let fields) = value else { return (name, []) }
                return (name, Array(fields.keys))
            }
        )
    }

    private init(_ declared: [(String, [String])]) {
        var variables: [String: Int] = [:]
        var fields: [String: [String: Int]] = [:]
        var next = 0
        for (name, names) in declared.sorted(by: { $0.0 < $1.0 }) {
            variables[name] = next
            next += 1
            guard !names.isEmpty else { continue }
            var slots: [String: Int] = [:]
            for field in names.sorted() {
                slots[field] = next
                next += 1
            }
            fields[name] = slots
        }
        self.variables = variables
        self.fields = fields
        count = next
    }

    /// One query's facts in their slots (an absent fact leaves its slot empty): once per query, for
    /// every rule to read.
    public func values(_ facts: [String: ExpressionValue]) -> FactValues {
        var slots = [ExpressionValue?](repeating: nil, count: count)
        for (name, slot) in variables {
            guard let value = facts[name] else { continue }
            slots[slot] = value
            guard case .object(_, let present) = value, let fieldSlots = fields[name] else { continue }
            for (field, fieldSlot) in fieldSlots { slots[fieldSlot] = present[field] }
        }
        return FactValues(slots: slots)
    }
}

/// One query's facts laid out by a `FactLayout`.
public struct FactValues: Sendable {
    let slots: [ExpressionValue?]
}
