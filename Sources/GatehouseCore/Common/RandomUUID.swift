import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

extension UUID {
    /// A version 4 UUID from the system's CSPRNG. Foundation's `UUID()` on Linux opens `/dev/urandom`
    /// for every UUID, two file opens per request on the hot paths; `SystemRandomNumberGenerator` is
    /// a `getrandom` call per 8 bytes, two a UUID, and a request that answers with a decision takes two
    /// UUIDs (docs/PERFORMANCE.md). The bytes come from `RandomPool`: one read of the device per 256 UUIDs.
    public static func random() -> UUID {
        var bytes = RandomPool.shared.sixteenBytes()
        return withUnsafeMutableBytes(of: &bytes) { raw in
            raw[6] = (raw[6] & 0x0F) | 0x40  // version 4
            raw[8] = (raw[8] & 0x3F) | 0x80  // RFC 9562 variant
            return UUID(uuid: raw.load(as: uuid_t.self))
        }
    }
}

/// The system CSPRNG's bytes (`/dev/urandom`), drawn 4 KiB at a time and handed out once each, for UUIDs. The ids are
/// not secrets (a request id is echoed to the caller; a decision id is read only with the app's
/// credential), but they must be unguessable and never repeat, which the kernel's generator gives;
/// the pool only saves its system calls.
final class RandomPool: Sendable {
    static let shared = RandomPool()
    private static let size = 4096
    private let state = Mutex<(bytes: [UInt8], position: Int)>(([], size))

    func sixteenBytes() -> (UInt64, UInt64) {
        state.withLock { state in
            if state.position + 16 > Self.size {
                state.bytes = Self.draw(Self.size)
                state.position = 0
            }
            defer { state.position += 16 }
            return state.bytes.withUnsafeBytes { raw in
                (
                    raw.loadUnaligned(fromByteOffset: state.position, as: UInt64.self),
                    raw.loadUnaligned(fromByteOffset: state.position + 8, as: UInt64.self)
                )
            }
        }
    }

    /// Opened once for the process: a draw never needs a descriptor, so running out of them (a flood of
    /// connections) cannot stop it. Without the device, or when a read fails, the bytes come from
    /// `SystemRandomNumberGenerator` (the same kernel generator, eight bytes a call).
    #if canImport(Glibc)
    private static let device = open("/dev/urandom", O_RDONLY | O_CLOEXEC)
    #endif

    static func draw(_ count: Int, fromDevice useDevice: Bool = true) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        #if canImport(Glibc)
        if useDevice, device >= 0 {
            var filled = 0
            while filled < count {
                let got = bytes.withUnsafeMutableBytes { read(device, $0.baseAddress! + filled, count - filled) }
                if got > 0 {
                    filled += got
                } else if got == 0 || errno != EINTR {
                    break
                }
            }
            if filled == count { return bytes }
        }
        #endif
        var generator = SystemRandomNumberGenerator()
        bytes.withUnsafeMutableBytes { raw in
            for offset in stride(from: 0, to: count, by: 8) {
                withUnsafeBytes(of: generator.next() as UInt64) { word in
                    raw[offset..<min(offset + 8, count)].copyBytes(from: word.prefix(count - offset))
                }
            }
        }
        return bytes
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
