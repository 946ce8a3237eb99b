/// A value while an expression is evaluated. Not `indirect` as a whole: every `.bool` and `.int` an
/// evaluation makes would be a heap allocation (measured in docs/PERFORMANCE.md). Only the addresses,
/// whose payloads are the largest, are boxed; lists, maps and objects hold their elements in their
/// own storage already.
public enum ExpressionValue: Sendable, Equatable {
    case bool(Bool)
    case int(Int64)
    case double(Double)
    case string(String)
    case null
    case timestamp(Timestamp)
    case duration(Duration)
    indirect case ip(IPAddress)
    indirect case cidr(CIDR)
    case list([ExpressionValue])
    case map([MapKey: ExpressionValue])
    /// A group of facts; a field absent from `fields` is one `has()` reports missing.
    case object(String, [String: ExpressionValue])

    /// A map's key: CEL's maps are keyed by bool, int or string; strings by code point, not by
    /// Swift's canonical equivalence.
    public enum MapKey: Sendable, Hashable {
        case bool(Bool)
        case int(Int64)
        case string(String)

        public static func == (left: MapKey, right: MapKey) -> Bool {
            switch (left, right) {
            case (.bool(let a), .bool(let b)): a == b
            case (.int(let a), .int(let b)): a == b
            case (.string(let a), .string(let b)): a.unicodeScalars.elementsEqual(b.unicodeScalars)
            default: false
            }
        }

        public func hash(into hasher: inout Hasher) {
            switch self {
            case .bool(let b): hasher.combine(b)
            case .int(let i): hasher.combine(i)
            case .string(let s): for scalar in s.unicodeScalars { hasher.combine(scalar.value) }
            }
        }

        var value: ExpressionValue {
            switch self {
            case .bool(let b): .bool(b)
            case .int(let i): .int(i)
            case .string(let s): .string(s)
            }
        }
    }

    var mapKey: MapKey? {
        switch self {
        case .bool(let b): .bool(b)
        case .int(let i): .int(i)
        case .string(let s): .string(s)
        default: nil
        }
    }

    /// An instant: seconds since 1970 and nanoseconds, within CEL's years 1 to 9999.
    public struct Timestamp: Sendable, Hashable, Comparable {
        public let seconds: Int64
        public let nanos: Int32

        public static let range: ClosedRange<Int64> = -62_135_596_800...253_402_300_799

        public init?(seconds: Int64, nanos: Int32) {
            guard Self.range.contains(seconds), (0..<1_000_000_000).contains(nanos) else { return nil }
            self.seconds = seconds
            self.nanos = nanos
        }

        public static func < (left: Timestamp, right: Timestamp) -> Bool { (left.seconds, left.nanos) < (right.seconds, right.nanos) }
    }

    /// A span of time in nanoseconds (about 292 years either way, the range of Go's and so cel-go's
    /// durations).
    public struct Duration: Sendable, Hashable, Comparable {
        public let nanoseconds: Int64

        public init(nanoseconds: Int64) { self.nanoseconds = nanoseconds }

        public static func < (left: Duration, right: Duration) -> Bool { left.nanoseconds < right.nanoseconds }
    }

    /// The value's type, as the checker names it (a list's or map's by its contents' common type).
    var type: ExpressionType {
        switch self {
        case .bool: .bool
        case .int: .int
        case .double: .double
        case .string: .string
        case .null: .null
        case .timestamp: .timestamp
        case .duration: .duration
        case .ip: .ip
        case .cidr: .cidr
        case .list: .list(.dyn)
        case .map: .map(key: .dyn, value: .dyn)
        case .object(let name, _): .object(name)
        }
    }

    /// CEL's equality: of like values; doubles as IEEE (NaN equals nothing); addresses by their bytes.
    public static func == (left: ExpressionValue, right: ExpressionValue) -> Bool {
        switch (left, right) {
        case (.bool(let a), .bool(let b)): a == b
        case (.int(let a), .int(let b)): a == b
        case (.double(let a), .double(let b)): a == b
        case (.string(let a), .string(let b)): a.unicodeScalars.elementsEqual(b.unicodeScalars)
        case (.null, .null): true
        case (.timestamp(let a), .timestamp(let b)): a == b
        case (.duration(let a), .duration(let b)): a == b
        case (.ip(let a), .ip(let b)): a.bytes == b.bytes
        case (.cidr(let a), .cidr(let b)): a.network.bytes == b.network.bytes && a.prefixLength == b.prefixLength
        case (.list(let a), .list(let b)): a.count == b.count && zip(a, b).allSatisfy { $0 == $1 }
        case (.map(let a), .map(let b)): a.count == b.count && a.allSatisfy { key, value in b[key].map { $0 == value } ?? false }
        case (.object(let n, let a), .object(let m, let b)): n == m && a.count == b.count && a.allSatisfy { b[$0.key] == $0.value }
        default: false
        }
    }
}
