import Foundation

/// Any JSON value, for inputs that must be read strictly: exact key sets, exact types, nothing coerced.
/// Used where a signature covers a re-serialisation of what the client sent (ALTCHA payloads).
public enum JSONValue: Equatable, Sendable, Decodable {
    case null
    case bool(Bool)
    case integer(Int64)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONValue].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    public static func parse(_ bytes: [UInt8]) -> JSONValue? {
        try? JSONDecoder().decode(JSONValue.self, from: Data(bytes))
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
