/// The types an expression's values have, as CEL names them; `ip` and `cidr` as Kubernetes' CEL
/// library has them (`net.IP`, `net.CIDR`). An `object` is a group of facts the environment declares
/// (the device, the velocity counts), read by field.
public indirect enum ExpressionType: Sendable, Equatable, Hashable, CustomStringConvertible {
    case bool, int, double, string, null, timestamp, duration, ip, cidr
    /// Any type: known only when evaluated (an element of a list literal of mixed types).
    case dyn
    case list(ExpressionType)
    case map(key: ExpressionType, value: ExpressionType)
    case object(String)

    public var description: String {
        switch self {
        case .bool: "bool"
        case .int: "int"
        case .double: "double"
        case .string: "string"
        case .null: "null_type"
        case .timestamp: "google.protobuf.Timestamp"
        case .duration: "google.protobuf.Duration"
        case .ip: "net.IP"
        case .cidr: "net.CIDR"
        case .dyn: "dyn"
        case .list(let element): "list(\(element))"
        case .map(let key, let value): "map(\(key), \(value))"
        case .object(let name): name
        }
    }

    /// Whether a value of this type may stand where `other` is expected: equal, or either is `dyn`
    /// (checked again when evaluated).
    func fits(_ other: ExpressionType) -> Bool {
        switch (self, other) {
        case (.dyn, _), (_, .dyn): true
        case (.list(let a), .list(let b)): a.fits(b)
        case (.map(let k, let v), .map(let l, let w)): k.fits(l) && v.fits(w)
        default: self == other
        }
    }

    /// The common type of values that must agree (a list's elements, a conditional's branches).
    func joined(with other: ExpressionType) -> ExpressionType? {
        if self == other { return self }
        if self == .dyn || other == .dyn { return .dyn }
        switch (self, other) {
        case (.list(let a), .list(let b)): return a.joined(with: b).map(ExpressionType.list)
        case (.map(let k, let v), .map(let l, let w)):
            guard let key = k.joined(with: l), let value = v.joined(with: w) else { return nil }
            return .map(key: key, value: value)
        default: return nil
        }
    }
}

/// What an expression may name: variables with their types, and the fields of each group of facts.
/// An optional field may be absent (`has()` tells); reading an absent one is an evaluation error.
public struct ExpressionEnvironment: Sendable {
    public struct Field: Sendable {
        public let type: ExpressionType
        public let optional: Bool

        public init(_ type: ExpressionType, optional: Bool = false) {
            self.type = type
            self.optional = optional
        }
    }

    public var variables: [String: ExpressionType]
    public var objects: [String: [String: Field]]

    public init(variables: [String: ExpressionType] = [:], objects: [String: [String: Field]] = [:]) {
        self.variables = variables
        self.objects = objects
    }
}
