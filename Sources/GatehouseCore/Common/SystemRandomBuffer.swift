/// The system CSPRNG's bytes as a `RandomNumberGenerator`, drawn 4 KiB at a time (`RandomPool.draw`)
/// rather than eight bytes a `getrandom` call as `SystemRandomNumberGenerator` draws them. For work
/// that takes tens of thousands of random numbers at once: a captcha's grain is three a pixel, and
/// drawn eight bytes a call it was a third of a challenge's CPU, an unauthenticated request's
/// (docs/PERFORMANCE.md). Every number still comes from the kernel's generator, each byte used once;
/// the buffer is a value the caller owns, shared with no other caller.
public struct SystemRandomBuffer: RandomNumberGenerator {
    private static let words = 512
    private var words: [UInt64] = []
    private var position = 0

    public init() {}

    public mutating func next() -> UInt64 {
        if position == words.count {
            let bytes = RandomPool.draw(Self.words * 8)
            words = bytes.withUnsafeBytes { raw in (0..<Self.words).map { raw.loadUnaligned(fromByteOffset: $0 * 8, as: UInt64.self) } }
            position = 0
        }
        defer { position += 1 }
        return words[position]
    }
}
