/// A zlib stream (RFC 1950) of one fixed-Huffman DEFLATE block (RFC 1951) with LZ77 matching. PNG
/// needs nothing more, and the captcha's smooth images compress well enough with it; writing it here
/// keeps Core free of a C library.
enum Deflate {
    static func zlib(_ input: [UInt8]) -> [UInt8] {
        var writer = BitWriter()
        writer.bytes = [0x78, 0x01]
        writer.write(1, bits: 1)  // BFINAL
        writer.write(1, bits: 2)  // BTYPE 01: fixed Huffman codes
        compress(input, into: &writer)
        writer.writeLiteralOrLength(256)
        writer.flush()
        let adler = adler32(input)
        writer.bytes += [UInt8(adler >> 24), UInt8(adler >> 16 & 0xFF), UInt8(adler >> 8 & 0xFF), UInt8(adler & 0xFF)]
        return writer.bytes
    }

    private static let window = 32768
    private static let minimumMatch = 3
    private static let maximumMatch = 258
    /// Candidates tried per position. The captcha's images are grain over smooth shapes: past the
    /// first few candidates a match is seldom longer. Walking 16 was a fifth of a challenge's CPU;
    /// with 4 the background is about 7% larger (docs/PERFORMANCE.md).
    private static let chainDepth = 4
    private static let hashBits = 15

    private static func compress(_ input: [UInt8], into writer: inout BitWriter) {
        let count = input.count
        var head = [Int32](repeating: -1, count: 1 << hashBits)
        var previous = [Int32](repeating: -1, count: window)
        func hash(_ i: Int) -> Int {
            let value = Int(input[i]) << 16 | Int(input[i + 1]) << 8 | Int(input[i + 2])
            return (value &* 2_654_435_761) >> (32 - hashBits) & ((1 << hashBits) - 1)
        }
        func insert(_ i: Int) {
            guard i + minimumMatch <= count else { return }
            let h = hash(i)
            previous[i & (window - 1)] = head[h]
            head[h] = Int32(i)
        }
        var i = 0
        while i < count {
            var bestLength = 0
            var bestDistance = 0
            if i + minimumMatch <= count {
                var candidate = Int(head[hash(i)])
                var depth = 0
                let limit = min(maximumMatch, count - i)
                while candidate >= 0, i - candidate <= window, depth < chainDepth {
                    var length = 0
                    while length < limit, input[candidate + length] == input[i + length] { length += 1 }
                    if length > bestLength {
                        bestLength = length
                        bestDistance = i - candidate
                        if length == limit { break }
                    }
                    let next = Int(previous[candidate & (window - 1)])
                    guard next < candidate else { break }
                    candidate = next
                    depth += 1
                }
            }
            if bestLength >= minimumMatch {
                writer.writeMatch(length: bestLength, distance: bestDistance)
                for j in i..<(i + bestLength) { insert(j) }
                i += bestLength
            } else {
                writer.writeLiteralOrLength(Int(input[i]))
                insert(i)
                i += 1
            }
        }
    }

    static func adler32(_ data: [UInt8]) -> UInt32 {
        var a: UInt32 = 1
        var b: UInt32 = 0
        var index = 0
        while index < data.count {
            // 5552 bytes is the most that can be summed before the 32-bit sums could overflow.
            let end = min(index + 5552, data.count)
            while index < end {
                a &+= UInt32(data[index])
                b &+= a
                index += 1
            }
            a %= 65521
            b %= 65521
        }
        return b << 16 | a
    }
}

/// DEFLATE's bit order: values LSB first, Huffman codes MSB first.
private struct BitWriter {
    var bytes: [UInt8] = []
    private var accumulator: UInt64 = 0
    private var filled = 0

    mutating func write(_ value: Int, bits: Int) {
        accumulator |= UInt64(value) << UInt64(filled)
        filled += bits
        while filled >= 8 {
            bytes.append(UInt8(accumulator & 0xFF))
            accumulator >>= 8
            filled -= 8
        }
    }

    mutating func writeCode(_ code: Int, bits: Int) {
        var reversed = 0
        for bit in 0..<bits where code & (1 << bit) != 0 { reversed |= 1 << (bits - 1 - bit) }
        write(reversed, bits: bits)
    }

    /// The fixed literal/length alphabet of RFC 1951 section 3.2.6.
    mutating func writeLiteralOrLength(_ symbol: Int) {
        switch symbol {
        case 0...143: writeCode(0x30 + symbol, bits: 8)
        case 144...255: writeCode(0x190 + symbol - 144, bits: 9)
        case 256...279: writeCode(symbol - 256, bits: 7)
        default: writeCode(0xC0 + symbol - 280, bits: 8)
        }
    }

    mutating func writeMatch(length: Int, distance: Int) {
        var code = Self.lengthBase.count - 1
        while Self.lengthBase[code] > length { code -= 1 }
        writeLiteralOrLength(257 + code)
        if Self.lengthExtra[code] > 0 { write(length - Self.lengthBase[code], bits: Self.lengthExtra[code]) }
        var distanceCode = Self.distanceBase.count - 1
        while Self.distanceBase[distanceCode] > distance { distanceCode -= 1 }
        writeCode(distanceCode, bits: 5)
        if Self.distanceExtra[distanceCode] > 0 {
            write(distance - Self.distanceBase[distanceCode], bits: Self.distanceExtra[distanceCode])
        }
    }

    mutating func flush() {
        if filled > 0 { bytes.append(UInt8(accumulator & 0xFF)) }
        accumulator = 0
        filled = 0
    }

    private static let lengthBase = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258,
    ]
    private static let lengthExtra = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0]
    private static let distanceBase = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289,
        16385, 24577,
    ]
    private static let distanceExtra = [0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13]
}
