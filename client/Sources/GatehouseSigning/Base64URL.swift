import Foundation

/// Base64 with the URL-safe alphabet and no padding (RFC 4648 section 5): ztokens, device ids, signatures.
public enum Base64URL {
    /// Unpadded base64url (RFC 4648 section 5) of `bytes`.
    public static func encode(_ bytes: some Sequence<UInt8>) -> String {
        Data(bytes).base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Strict: only `A-Z a-z 0-9 - _`, no padding, no whitespace.
    public static func decode(_ text: String) -> [UInt8]? {
        guard text.utf8.allSatisfy({ isAlphabet($0) }), text.utf8.count % 4 != 1 else { return nil }
        var standard = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        standard += String(repeating: "=", count: (4 - standard.utf8.count % 4) % 4)
        return Data(base64Encoded: standard).map(Array.init)
    }

    /// `A-Z a-z 0-9 - _`: also the alphabet of SDK nonces.
    public static func isAlphabet(_ byte: UInt8) -> Bool {
        (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) || (0x30...0x39).contains(byte) || byte == 0x2D || byte == 0x5F
    }
}
