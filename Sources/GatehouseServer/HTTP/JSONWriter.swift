import Foundation
import GatehouseCore

/// Writes JSON by hand for the hot routes' answers, where Foundation's `JSONEncoder` (its generic
/// boxing of every value) was 8% of the forged-token route's profile (docs/PERFORMANCE.md). It writes
/// what `JSONBody.encoder` writes (keys in the order given, which the callers keep sorted as the
/// encoder's `.sortedKeys` does; slashes unescaped; dates as ISO 8601 in UTC to the second), and
/// `JSONWriterTests` holds it to that encoder's output.
struct JSONWriter {
    private(set) var bytes: [UInt8] = []
    private var needsComma = false

    init(capacity: Int = 512) {
        bytes.reserveCapacity(capacity)
    }

    mutating func object(_ members: (inout JSONWriter) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "{"))
        needsComma = false
        members(&self)
        bytes.append(UInt8(ascii: "}"))
        needsComma = true
    }

    mutating func array<Element>(_ elements: [Element], _ write: (inout JSONWriter, Element) -> Void) {
        separate()
        bytes.append(UInt8(ascii: "["))
        needsComma = false
        for element in elements { write(&self, element) }
        bytes.append(UInt8(ascii: "]"))
        needsComma = true
    }

    /// A member's key; its value follows. Keys are plain ASCII names here.
    mutating func key(_ name: StaticString) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        name.withUTF8Buffer { bytes.append(contentsOf: $0) }
        bytes.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
        needsComma = false
    }

    /// A member with a text value; none at all when `text` is nil (the refusals leave absent members out).
    mutating func member(_ name: StaticString, _ text: String?) {
        guard let text else { return }
        key(name)
        string(text)
    }

    mutating func string(_ text: String) {
        separate()
        bytes.append(UInt8(ascii: "\""))
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "\""): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\"")])
            case UInt8(ascii: "\\"): bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "\\")])
            case 0x08: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "b")])
            case 0x0C: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "f")])
            case 0x0A: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "n")])
            case 0x0D: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "r")])
            case 0x09: bytes.append(contentsOf: [UInt8(ascii: "\\"), UInt8(ascii: "t")])
            case 0..<0x20:
                let hex = Array("0123456789abcdef".utf8)
                bytes.append(contentsOf: Array("\\u00".utf8) + [hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]])
            default: bytes.append(byte)
            }
        }
        bytes.append(UInt8(ascii: "\""))
        needsComma = true
    }

    mutating func integer(_ value: Int) {
        separate()
        bytes.append(contentsOf: String(value).utf8)
        needsComma = true
    }

    /// `yyyy-MM-ddTHH:mm:ssZ`, the second the date falls in (Core's `UTCTime`, as the storage
    /// protocols spell it).
    mutating func date(_ date: Date) {
        string(UTCTime(date).iso8601)
    }

    private mutating func separate() {
        if needsComma { bytes.append(UInt8(ascii: ",")) }
    }
}

extension JSONWriter {
    /// The SDK's and the slider's refusal (`code`, `reason`, `message`, `requestId`), members in sorted
    /// order as their readers have always had them. Refusals are what a flood of bad requests is
    /// answered with, so they are written here rather than through Foundation's serialiser.
    static func refusal(code: Int, reason: String, message: String, requestID: String?) -> [UInt8] {
        var writer = JSONWriter(capacity: 256)
        writer.object { body in
            body.key("code")
            body.integer(code)
            body.member("message", message)
            body.member("reason", reason)
            body.member("requestId", requestID)
        }
        return writer.bytes
    }
}
