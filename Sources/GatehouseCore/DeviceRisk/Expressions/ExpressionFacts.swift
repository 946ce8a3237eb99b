/// Where each fact sits when an expression is evaluated: every variable, and every field of a variable
/// that is a group of facts (`device.known`), has a slot of its own. A compiled expression reads
/// `device.known` from its slot, where the tree walk looked the variable and then the field up by name
/// in each rule for every query; the query lays its facts out once for all its rules.
public struct FactLayout: Sendable {
    let variables: [String: Int]
    /// The fields' slots of each variable that is a group of facts.
    let fields: [String: [String: Int]]
    let count: Int

    /// The layout of every variable and field the environment declares, in name order.
    public init(_ environment: ExpressionEnvironment) {
        var variables: [String: Int] = [:]
        var fields: [String: [String: Int]] = [:]
        var next = 0
        for (name, type) in environment.variables.sorted(by: { $0.key < $1.key }) {
            variables[name] = next
            next += 1
            guard case .object(let object) = type, let declared = environment.objects[object] else { continue }
            var slots: [String: Int] = [:]
            for field in declared.keys.sorted() {
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

/// One query's facts laid out by a `FactLayout`, and what its rules worked out from them that the next
/// rule would work out again.
public struct FactValues: Sendable {
    let slots: [ExpressionValue?]
    /// The last address text `ip()` or `containsIP()` parsed, and its address: a policy's network
    /// rules (`cidr("...").containsIP(client.address)`) each parse the same fact (docs/PERFORMANCE.md).
    var parsedAddress: (text: String, address: IPAddress)?

    init(slots: [ExpressionValue?]) { self.slots = slots }
}
