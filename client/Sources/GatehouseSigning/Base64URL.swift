import Foundation

/// Base64 with the URL-safe alphabet and no padding (RFC 4648 section 5): ztokens, device ids, signatures.
public enum Base64URL {
    /// Unpadded base64url (RFC 4648 section 5) of `bytes`.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        // Byte by byte: String.replacingOccurrences goes through NSString on Linux and showed up in
        // the risk query's profile.
        var text = Array(Data(bytes).base64EncodedData())
        while text.last == UInt8(ascii: "=") { text.removeLast() }
        for index in text.indices {
            if text[index] == UInt8(ascii: "+") { text[index] = UInt8(ascii: "-") }
            if text[index] == UInt8(ascii: "/") { text[index] = UInt8(ascii: "_") }
        }
        return String(decoding: text, as: UTF8.self)
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
