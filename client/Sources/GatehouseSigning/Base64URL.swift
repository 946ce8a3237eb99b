import Foundation

/// Base64 with the URL-safe alphabet and no padding (RFC 4648 section 5): ztokens, device ids, signatures.
public enum Base64URL {
    /// Unpadded base64url (RFC 4648 section 5) of `bytes`.
    /// Written out and inlinable rather than through Foundation's `Data.base64EncodedData` (and generic
    /// over any sequence, unspecialized): that way it was 3% of a risk query's server samples, for the
    /// 12 bytes of a token id (docs/PERFORMANCE.md).
    @inlinable
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var text: [UInt8] = []
        text.reserveCapacity(bytes.underestimatedCount * 4 / 3 + 3)
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            buffer = buffer << 8 | UInt32(byte)
            bits += 8
            while bits >= 6 {
                bits -= 6
                text.append(character(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)) & 0x3F))
            }
        }
        if bits > 0 { text.append(character(UInt8(truncatingIfNeeded: buffer << UInt32(6 - bits)) & 0x3F)) }
        return String(decoding: text, as: UTF8.self)
    }

    @usableFromInline
    static func character(_ sextet: UInt8) -> UInt8 {
        switch sextet {
        case 0..<26: UInt8(ascii: "A") + sextet
        case 26..<52: UInt8(ascii: "a") + sextet - 26
        case 52..<62: UInt8(ascii: "0") + sextet - 52
        case 62: UInt8(ascii: "-")
        default: UInt8(ascii: "_")
        }
    }

    /// Strict: only `A-Z a-z 0-9 - _`, no padding, no whitespace, and the unused low bits of the last
    /// character zero, so that each byte string has exactly one encoding.
    public static func decode(_ text: String) -> [UInt8]? {
        decode(bytes: text.utf8)
    }

    /// `decode` over the UTF-8 of a text, e.g. one part of a compact JWS, without copying it out first.
    /// Inlinable so that it is specialized for the caller's collection: unspecialized, it cost more
    /// than the rest of a JWS parse.
    @inlinable
    public static func decode(bytes: some Collection<UInt8>) -> [UInt8]? {
        guard bytes.count % 4 != 1 else { return nil }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count * 3 / 4)
        // Bits beyond the low 14 fall off the shift; only the last 6 to 12 are ever read.
        var buffer: UInt32 = 0
        var bits = 0
        for byte in bytes {
            guard let value = sextet(byte) else { return nil }
            buffer = buffer << 6 | UInt32(value)
            bits += 6
            if bits >= 8 {
                bits -= 8
                decoded.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        guard buffer & (1 << UInt32(bits) - 1) == 0 else { return nil }
        return decoded
    }

    @usableFromInline
    static func sextet(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "-"): 62
        case UInt8(ascii: "_"): 63
        default: nil
        }
    }

    /// `A-Z a-z 0-9 - _`: also the alphabet of SDK nonces.
    public static func isAlphabet(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2D || byte == 0x5F
    }
}
