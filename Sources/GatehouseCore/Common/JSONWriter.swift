import Foundation

/// Writes JSON by hand for the hot paths (answers of the hot routes, a decision's tags), where
/// Foundation's `JSONEncoder` (its generic boxing of every value) was 8% of the forged-token route's
/// profile (docs/PERFORMANCE.md). It writes what the server's `JSONBody.encoder` writes (keys in the
/// order given, which the callers keep sorted as the encoder's `.sortedKeys` does; slashes unescaped;
/// dates as ISO 8601 in UTC to the second); the server's `RiskJSONTests` and `RefusalJSONTests` hold it
/// to Foundation's output.
public struct JSONWriter: Sendable {
    /// What has been written.
    public var bytes: [UInt8] { written }
    @usableFromInline var written: [UInt8] = []
    @usableFromInline var needsComma = false

    @inlinable public init(capacity: Int = 512) {
        written.reserveCapacity(capacity)
    }

    @inlinable public mutating func object(_ members: (inout JSONWriter) -> Void) {
        separate()
        written.append(UInt8(ascii: "{"))
        needsComma = false
        members(&self)
        written.append(UInt8(ascii: "}"))
        needsComma = true
    }

    @inlinable public mutating func array<Element>(_ elements: [Element], _ write: (inout JSONWriter, Element) -> Void) {
        separate()
        written.append(UInt8(ascii: "["))
        needsComma = false
        for element in elements { write(&self, element) }
        written.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// A member's key; its value follows. Keys are plain ASCII names here.
    @inlinable public mutating func key(_ name: StaticString) {
        separate()
        written.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { written.append(contentsOf: $0) }
        written.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        needsComma = false
    }

    /// A member with a text value; none at all when `text` is nil (the refusals leave absent members out).
    @inlinable public mutating func member(_ name: StaticString, _ text: String?) {
        guard let text else { return }
        key(name)
        string(text)
    }

    @inlinable public mutating func string(_ text: String) {
        separate()
        written.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): written.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): written.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x08: written.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: written.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x0A: written.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: written.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: written.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                written.append(contentsOf: Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
            default: written.append(byte)
            }
        }
        written.append(UInt8(ascii: "\""))
        needsComma = true
    }

    @inlinable public mutating func integer(_ value: Int) {
        separate()
        written.append(contentsOf: String(value).utf8)
        needsComma = true
    }

    /// `yyyy-MM-ddTHH:mm:ssZ`, the second the date falls in (Core's `UTCTime`, as the storage
    /// protocols spell it).
    @inlinable public mutating func date(_ date: Date) {
        string(UTCTime(date).iso8601)
    }

    @inlinable mutating func separate() {
        if needsComma { written.append(UInt8(ascii: ",")) }
    }
}
