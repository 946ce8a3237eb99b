/// The one spelling of a path Gatehouse routes. The router skips empty segments while proxies, logs
/// and audit readers do not, so every other spelling (`//v1/admin`, `/v1/./admin`, `/v1/%61dmin`,
/// a trailing slash, a backslash, `;` parameters) is refused before routing instead of being
/// normalised: no two components can then disagree about which route a request named.
public enum RequestPath {
    /// Longer paths than any route's are refused unread.
    public static let maxLength = 1024

    /// True when `path` (the request target up to `?`) is `/` or `/` followed by non-empty segments of
    /// unreserved characters (RFC 3986: letters, digits, `-`, `.`, `_`, `~`), none of them dots only (`.`, `..`).
    public static func isCanonical(_ path: some StringProtocol) -> Bool {
        let bytes = path.utf8
        guard bytes.first == UInt8(ascii: "/"), bytes.count <= maxLength else { return false }
        if bytes.count == 1 { return true }
        var segmentLength = 0
        var segmentDots = 0
        for byte in bytes.dropFirst() {
            if byte == UInt8(ascii: "/") {
                guard segmentLength > 0, segmentDots != segmentLength else { return false }
                segmentLength = 0
                segmentDots = 0
                continue
            }
            guard isUnreserved(byte) else { return false }
            segmentLength += 1
            if byte == UInt8(ascii: ".") { segmentDots += 1 }
        }
        return segmentLength > 0 && (segmentDots != segmentLength)
    }

    private static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
    }
}

extension RequestPath {
    /// `text` with each `%XX` replaced by its byte; nil when a `%` is not followed by two hex digits or
    /// the bytes are not UTF-8. Foundation's `removingPercentEncoding` goes through `CFString` on Linux
    /// (a twentieth of the gate's time, docs/PERFORMANCE.md) and sometimes turns bytes that are not
    /// UTF-8 into U+FFFD instead of failing: a path an upstream could read otherwise.
    public static func percentDecoded(_ text: some StringProtocol) -> String? {
        let bytes = Array(text.utf8)
        guard bytes.contains(UInt8(ascii: "%")) else { return String(text) }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = 0
        while index < bytes.count {
            guard bytes[index] == UInt8(ascii: "%") else {
                decoded.append(bytes[index])
                index += 1
                continue
            }
            guard index + 2 < bytes.count, let high = hexValue(bytes[index + 1]), let low = hexValue(bytes[index + 2]) else { return nil }
            decoded.append(high << 4 | low)
            index += 3
        }
        return String(validating: decoded, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
