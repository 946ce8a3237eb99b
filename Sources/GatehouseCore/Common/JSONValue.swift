/// Any JSON value, for inputs that must be read strictly: exact key sets, exact types, nothing coerced.
/// Used where a signature covers what the client sent (JWS headers, ALTCHA payloads) and for policy
/// documents.
public enum JSONValue: Equatable, Sendable {
    case null
    case bool(Bool)
    /// A number written without a fraction or exponent that fits 64 bits.
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    /// RFC 8259 JSON, read strictly (`JSONReader`): nil for anything else, for a key that appears twice
    /// in one object, and for nesting deeper than `JSONReader.maximumDepth`.
    public static func parse(_ bytes: [UInt8]) -> JSONValue? {
        var reader = JSONReader(bytes)
        return reader.document()
    }

    public var object: [String: JSONValue]? { if case .object(let value) = self { value } else { nil } }
    public var string: String? { if case .string(let value) = self { value } else { nil } }
    public var integer: Int64? { if case .integer(let value) = self { value } else { nil } }

    /// The object's members when its keys are exactly `required` plus some of `optional`.
    public func members(required: Set<String>, optional: Set<String> = []) -> [String: JSONValue]? {
        guard let object, required.isSubset(of: object.keys), Set(object.keys).isSubset(of: required.union(optional)) else { return nil }
        return object
    }
}

extension JSONValue: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let b): try container.encode(b)
        case .integer(let i): try container.encode(i)
        case .number(let d): try container.encode(d)
        case .string(let s): try container.encode(s)
        case .array(let items): try container.encode(items)
        case .object(let members): try container.encode(members)
        }
    }
}
