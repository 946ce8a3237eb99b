/// Percent-encoding as every cloud signer here wants it (RFC 3986): only `A-Z a-z 0-9 - _ . ~` stay,
/// every other UTF-8 byte becomes `%XY` in upper case, so a space is `%20` (never `+`) and `*` is `%2A`.
/// Foundation's `.urlQueryAllowed` keeps far more and would make signatures that no provider accepts.
public enum URIEncoding {
    private static let hexDigits = Array("0123456789ABCDEF".utf8)

    public static func encode(_ text: String, keepingSlash: Bool = false) -> String {
        var out: [UInt8] = []
        out.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isUnreserved(byte) || (keepingSlash && byte == UInt8(ascii: "/")) {
                out.append(byte)
            } else {
                out.append(UInt8(ascii: "%"))
                out.append(hexDigits[Int(byte >> 4)])
                out.append(hexDigits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// A form body's encoding (`application/x-www-form-urlencoded`) as botocore writes it: the same,
    /// but a space is `+`. Form readers such as moto's decode `+` and may keep `%20` apart.
    public static func formEncode(_ text: String) -> String {
        encode(text).replacingOccurrences(of: "%20", with: "+")
    }

    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"): true
        case UInt8(ascii: "-"), UInt8(ascii: "_"), UInt8(ascii: "."), UInt8(ascii: "~"): true
        default: false
        }
    }

    /// Query pairs as SigV4 and ACS3 canonicalise them: encoded, sorted by name then value in byte
    /// order, `name=value` (an empty value keeps its `=`), joined with `&`.
    static func canonicalQuery(_ pairs: [(String, String)]) -> String {
        pairs.map { (encode($0.0), encode($0.1)) }
            .sorted { $0.0 == $1.0 ? precedes($0.1, $1.1) : precedes($0.0, $1.0) }
            .map { "\($0.0)=\($0.1)" }
            .joined(separator: "&")
    }

    /// Headers lower-cased and sorted by name, as `name:value\n` lines, with the `;`-joined names.
    static func canonicalHeaders(_ headers: [(String, String)]) -> (lines: String, names: String) {
        let lowered = headers.map { ($0.0.lowercased(), $0.1) }.sorted { precedes($0.0, $1.0) }
        return (lowered.map { "\($0.0):\($0.1)\n" }.joined(), lowered.map(\.0).joined(separator: ";"))
    }

    /// Byte-order comparison, as the signers sort names: Swift's `<` on strings follows Unicode
    /// ordering, which is not the same thing once non-ASCII appears.
    static func precedes(_ lhs: String, _ rhs: String) -> Bool {
        lhs.utf8.lexicographicallyPrecedes(rhs.utf8)
    }
}
