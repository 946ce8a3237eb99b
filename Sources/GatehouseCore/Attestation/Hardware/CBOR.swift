/// A CBOR data item (RFC 8949), as far as App Attest attestation objects and assertions use it.
///
/// Written here because no CBOR package is among the ones we build with, and because what arrives is
/// built by whoever holds the app: the decoder is strict and bounded rather than general. It refuses
/// indefinite lengths, tags, floats and simple values other than false, true and null, integers and
/// lengths not in their shortest form, text that is not UTF-8, duplicate map keys, maps of more than
/// `maximumMapEntries` (the duplicate check compares each key with the earlier ones, so a map of
/// thousands of keys would be work an attacker chose), nesting deeper than `maximumDepth`, lengths
/// past the end of the input, and bytes after the item.
public indirect enum CBORValue: Equatable, Sendable {
    case unsigned(UInt64)
    /// The integer -1 - n.
    case negative(UInt64)
    case bytes([UInt8])
    case text(String)
    case array([CBORValue])
    /// Entries in the order they were sent; keys are unique.
    case map([CBORMapEntry])
    case bool(Bool)
    case null

    public static let maximumDepth = 8
    /// Attestation objects and assertions have at most five keys per map; a COSE key has five.
    public static let maximumMapEntries = 16

    /// Decodes exactly one item that fills `input`.
    public static func decode(_ input: [UInt8]) throws(CBORError) -> CBORValue {
        var reader = CBORReader(input)
        let value = try reader.item(depth: 0)
        guard reader.isAtEnd else { throw CBORError.trailingBytes }
        return value
    }

    /// The value under a text key of a map; nil when absent or when this is not a map.
    public subscript(key: String) -> CBORValue? {
        guard case .map(let entries) = self else { return nil }
        return entries.first { $0.key == .text(key) }?.value
    }

    public var byteString: [UInt8]? {
        if case .bytes(let bytes) = self { return bytes }
        return nil
    }

    public var textString: String? {
        if case .text(let text) = self { return text }
        return nil
    }

    public var arrayItems: [CBORValue]? {
        if case .array(let items) = self { return items }
        return nil
    }
}

public struct CBORMapEntry: Equatable, Sendable {
    public let key: CBORValue
    public let value: CBORValue
}

public enum CBORError: Error, Equatable, Sendable {
    case truncated
    case trailingBytes
    case indefiniteLength
    case notShortestForm
    case unsupportedType(major: UInt8, info: UInt8)
    case invalidUTF8
    case duplicateKey
    case tooManyEntries
    case tooDeep
}

private struct CBORReader {
    private let input: [UInt8]
    private var offset = 0

    init(_ input: [UInt8]) {
        self.input = input
    }

    var isAtEnd: Bool { offset == input.count }
    private var remaining: Int { input.count - offset }

    mutating func item(depth: Int) throws(CBORError) -> CBORValue {
        guard depth < CBORValue.maximumDepth else { throw .tooDeep }
        let initial = try byte()
        let major = initial >> 5
        let info = initial & 0x1F
        guard info != 31 else { throw .indefiniteLength }
        if major == 7 { return try simple(info) }
        let argument = try self.argument(info, major: major)
        switch major {
        case 0: return .unsigned(argument)
        case 1: return .negative(argument)
        case 2: return .bytes(try bytes(count: argument))
        case 3:
            guard let text = String(validating: try bytes(count: argument), as: UTF8.self) else { throw .invalidUTF8 }
            return .text(text)
        case 4:
            // Each item takes at least one byte: a count past what is left is refused before allocating.
            let count = try boundedCount(argument)
            var items: [CBORValue] = []
            items.reserveCapacity(count)
            for _ in 0..<count { items.append(try item(depth: depth + 1)) }
            return .array(items)
        case 5:
            guard argument <= UInt64(CBORValue.maximumMapEntries) else { throw .tooManyEntries }
            let count = try boundedCount(argument, bytesPerItem: 2)
            var entries: [CBORMapEntry] = []
            entries.reserveCapacity(count)
            for _ in 0..<count {
                let key = try item(depth: depth + 1)
                guard !entries.contains(where: { $0.key == key }) else { throw .duplicateKey }
                entries.append(CBORMapEntry(key: key, value: try item(depth: depth + 1)))
            }
            return .map(entries)
        default:
            throw .unsupportedType(major: major, info: info)
        }
    }

    private mutating func simple(_ info: UInt8) throws(CBORError) -> CBORValue {
        switch info {
        case 20: return .bool(false)
        case 21: return .bool(true)
        case 22: return .null
        default: throw .unsupportedType(major: 7, info: info)
        }
    }

    /// The head's argument (RFC 8949 3.1), in its shortest form only.
    private mutating func argument(_ info: UInt8, major: UInt8) throws(CBORError) -> UInt64 {
        switch info {
        case 0...23: return UInt64(info)
        case 24:
            let value = UInt64(try byte())
            guard value >= 24 else { throw .notShortestForm }
            return value
        case 25: return try wide(2, floor: 0xFF)
        case 26: return try wide(4, floor: 0xFFFF)
        case 27: return try wide(8, floor: 0xFFFF_FFFF)
        default: throw .unsupportedType(major: major, info: info)
        }
    }

    private mutating func wide(_ width: Int, floor: UInt64) throws(CBORError) -> UInt64 {
        var value: UInt64 = 0
        for byte in try bytes(count: UInt64(width)) { value = value << 8 | UInt64(byte) }
        guard value > floor else { throw .notShortestForm }
        return value
    }

    private func boundedCount(_ count: UInt64, bytesPerItem: Int = 1) throws(CBORError) -> Int {
        guard count <= UInt64(remaining / bytesPerItem) else { throw .truncated }
        return Int(count)
    }

    private mutating func byte() throws(CBORError) -> UInt8 {
        guard offset < input.count else { throw .truncated }
        defer { offset += 1 }
        return input[offset]
    }

    private mutating func bytes(count: UInt64) throws(CBORError) -> [UInt8] {
        guard count <= UInt64(remaining) else { throw .truncated }
        let end = offset + Int(count)
        defer { offset = end }
        return Array(input[offset..<end])
    }
}
