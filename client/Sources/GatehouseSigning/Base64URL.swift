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

    /// Strict: only `A-Z a-z 0-9 - _`, no padding, no whitespace.
    public static func decode(_ text: String) -> [UInt8]? {
        guard text.utf8.allSatisfy({ isAlphabet($0) }), text.utf8.count % 4 != 1 else { return nil }
        var standard = text.utf8.map { byte -> UInt8 in
            switch byte {
            case UInt8(ascii: "-"): UInt8(ascii: "+")
            case UInt8(ascii: "_"): UInt8(ascii: "/")
            default: byte
            }
        }
        standard += repeatElement(UInt8(ascii: "="), count: (4 - standard.count % 4) % 4)
        return Data(base64Encoded: Data(standard)).map(Array.init)
    }

    /// `A-Z a-z 0-9 - _`: also the alphabet of SDK nonces.
    public static func isAlphabet(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2D || byte == 0x5F
    }
}
