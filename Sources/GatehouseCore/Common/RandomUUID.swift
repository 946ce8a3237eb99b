import Foundation

extension UUID {
    /// A version 4 UUID from the system generator (`getrandom`). Foundation's `UUID()` on Linux opens
    /// `/dev/urandom` for every UUID, two file opens per request on the hot paths (`docs/PERFORMANCE.md`).
    public static func random() -> UUID {
        var generator = SystemRandomNumberGenerator()
        var bytes = (generator.next() as UInt64, generator.next() as UInt64)
        return withUnsafeMutableBytes(of: &bytes) { raw in
            raw[6] = (raw[6] & 0x0F) | 0x40  // version 4
            raw[8] = (raw[8] & 0x3F) | 0x80  // RFC 9562 variant
            return UUID(uuid: raw.load(as: uuid_t.self))
        }
    }
}

extension UUID {
    /// The canonical text in lower case, as every id is written (`8-4-4-4-12` hex digits). Foundation's
    /// `uuidString` on Linux formats with `sprintf`, and upper case, so that each id paid a format and a
    /// second string on the request path (a request id, a decision id in every answer).
    public var text: String {
        let digits: StaticString = "0123456789abcdef"
        return withUnsafeBytes(of: uuid) { raw in
            String(unsafeUninitializedCapacity: 36) { output in
                var position = 0
                for (index, byte) in raw.enumerated() {
                    if index == 4 || index == 6 || index == 8 || index == 10 {
                        output[position] = UInt8(ascii: "-")
                        position += 1
                    }
                    output[position] = digits.utf8Start[Int(byte >> 4)]
                    output[position + 1] = digits.utf8Start[Int(byte & 0x0F)]
                    position += 2
                }
                return position
            }
        }
    }
}
