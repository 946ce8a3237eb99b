/// Values to and from JSON, for the `gatehouse rules evaluate` command and its corpus: a fact is read
/// as the environment declares its type (a timestamp from RFC 3339 text, a duration from Go's
/// syntax); a result is written with its type beside it, so that a reader can compare exactly.
extension ExpressionValue {
    /// `json` as a value of `type`, or why not.
    public static func from(
        _ json: JSONValue,
        as type: ExpressionType,
        in environment: ExpressionEnvironment
    ) throws(EvaluationError) -> ExpressionValue {
        switch (type, json) {
        case (.bool, .bool(let b)): return .bool(b)
        case (.int, .integer(let i)): return .int(i)
        case (.double, .number(let d)): return .double(d)
        case (.double, .integer(let i)): return .double(Double(i))
        case (.string, .string(let s)): return .string(s)
        case (.null, .null): return .null
        case (.timestamp, .string(let s)):
            guard let (seconds, nanos) = RFC3339.instant(s), let stamp = Timestamp(seconds: seconds, nanos: nanos) else {
                throw EvaluationError("'\(s.prefix(60))' is not an RFC 3339 timestamp")
            }
            return .timestamp(stamp)
        case (.duration, .string(let s)): return .duration(try ExpressionFunctions.parseDuration(s))
        case (.ip, .string(let s)): return .ip(try ExpressionFunctions.address(s))
        case (.cidr, .string(let s)): return .cidr(try ExpressionFunctions.network(s))
        case (.list(let element), .array(let items)):
            var values: [ExpressionValue] = []
            for item in items { values.append(try from(item, as: element, in: environment)) }
            return .list(values)
        case (.map(.string, let value), .object(let members)):
            var map: [MapKey: ExpressionValue] = [:]
            for (key, member) in members { map[.string(key)] = try from(member, as: value, in: environment) }
            return .map(map)
        case (.object(let name), .object(let members)):
            guard let fields = environment.objects[name] else { throw EvaluationError("no group of facts named \(name)") }
            var values: [String: ExpressionValue] = [:]
            for (key, member) in members {
                guard let field = fields[key] else { throw EvaluationError("\(name) has no field '\(key)'") }
                values[key] = try from(member, as: field.type, in: environment)
            }
            for (key, field) in fields where !field.optional && values[key] == nil { throw EvaluationError("\(name).\(key) is required") }
            return .object(name, values)
        case (.dyn, _): return try untyped(json)
        default: throw EvaluationError("a \(type) fact cannot be read from this JSON")
        }
    }

    static func untyped(_ json: JSONValue) throws(EvaluationError) -> ExpressionValue {
        switch json {
        case .null: return .null
        case .bool(let b): return .bool(b)
        case .integer(let i): return .int(i)
        case .number(let d): return .double(d)
        case .string(let s): return .string(s)
        case .array(let items):
            var values: [ExpressionValue] = []
            for item in items { values.append(try untyped(item)) }
            return .list(values)
        case .object(let members):
            var map: [MapKey: ExpressionValue] = [:]
            for (key, member) in members { map[.string(key)] = try untyped(member) }
            return .map(map)
        }
    }

    /// The value as JSON with its type: `{"type": "int", "value": 3}`; doubles that JSON cannot hold
    /// (infinities, NaN) as text, timestamps as RFC 3339 in UTC, durations as seconds (`"5400s"`).
    public var json: JSONValue {
        switch self {
        case .bool(let b): return .object(["type": .string("bool"), "value": .bool(b)])
        case .int(let i): return .object(["type": .string("int"), "value": .integer(i)])
        case .double(let d):
            return .object([
                "type": .string("double"), "value": d.isFinite ? .number(d) : .string(d.isNaN ? "NaN" : d > 0 ? "Infinity" : "-Infinity"),
            ])
        case .string(let s): return .object(["type": .string("string"), "value": .string(s)])
        case .null: return .object(["type": .string("null")])
        case .timestamp(let t): return .object(["type": .string("timestamp"), "value": .array([.integer(t.seconds), .integer(Int64(t.nanos))])])
        case .duration(let d): return .object(["type": .string("duration"), "value": .integer(d.nanoseconds)])
        case .ip(let ip): return .object(["type": .string("ip"), "value": .array(ip.bytes.map { .integer(Int64($0)) })])
        case .cidr(let c): return .object(["type": .string("cidr"), "value": .string(c.description)])
        case .list(let items): return .object(["type": .string("list"), "value": .array(items.map(\.json))])
        case .map(let map):
            return .object(["type": .string("map"), "value": .array(map.map { .array([$0.key.value.json, $0.value.json]) })])
        case .object(let name, let fields): return .object(["type": .string(name), "value": .object(fields.mapValues(\.json))])
        }
    }
}
