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
