import Foundation

/// The fixed UTC spellings the storage protocols use. Written out by hand because Foundation's
/// formatters depend on locale and time-zone settings that a server must not inherit.
public struct UTCTime: Equatable, Sendable {
    public let year: Int, month: Int, day: Int, hour: Int, minute: Int, second: Int, weekday: Int

    public init(_ date: Date) {
        let seconds = Int(date.timeIntervalSince1970.rounded(.down))
        let days = Int((Double(seconds) / 86400).rounded(.down))
        let remainder = seconds - days * 86400
        (year, month, day) = Self.civil(fromDays: days)
        hour = remainder / 3600
        minute = remainder % 3600 / 60
        second = remainder % 60
        // 1970-01-01 was a Thursday (index 4 with Sunday as 0).
        weekday = ((days % 7) + 7 + 4) % 7
    }

    /// `20130524T000000Z`, SigV4's and OSS V4's `x-*-date`.
    public var compact: String { "\(pad(year, 4))\(pad(month))\(pad(day))T\(pad(hour))\(pad(minute))\(pad(second))Z" }
    /// `20130524`, the credential scope's day.
    public var day8: String { "\(pad(year, 4))\(pad(month))\(pad(day))" }
    /// `2015-04-09T11:52:19Z`, Alibaba's Timestamp and the OSS SDKs' Expiration.
    public var iso8601: String {
        // Written digit by digit into one buffer: every JSON date the service answers (a risk
        // decision's, a forged flood's included) goes through here, and seven padded pieces joined by
        // interpolation cost twenty-odd allocations. A year of other than four digits keeps the padded way.
        guard (0...9999).contains(year) else {
            return "\(pad(year, 4))-\(pad(month))-\(pad(day))T\(pad(hour)):\(pad(minute)):\(pad(second))Z"
        }
        return String(unsafeUninitializedCapacity: 20) { text in
            var at = 0
            func put(_ value: Int, _ width: Int) {
                var rest = value
                for position in stride(from: at + width - 1, through: at, by: -1) {
                    text[position] = UInt8(ascii: "0") + UInt8(rest % 10)
                    rest /= 10
                }
                at += width
            }
            func put(_ character: Unicode.Scalar) {
                text[at] = UInt8(ascii: character)
                at += 1
            }
            put(year, 4)
            put("-")
            put(month, 2)
            put("-")
            put(day, 2)
            put("T")
            put(hour, 2)
            put(":")
            put(minute, 2)
            put(":")
            put(second, 2)
            put("Z")
            return at
        }
    }
    /// `Thu, 17 Nov 2005 18:49:58 GMT`, the HTTP date OSS V1 signs.
    public var http: String {
        "\(Self.weekdays[weekday]), \(pad(day)) \(Self.months[month - 1]) \(pad(year, 4)) \(pad(hour)):\(pad(minute)):\(pad(second)) GMT"
    }

    static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// Reads an HTTP date (`Thu, 17 Nov 2005 18:49:58 GMT`) strictly; nil for anything else.
    public static func parseHTTP(_ text: String) -> Date? {
        let parts = text.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 6, parts[0].count == 4, parts[0].hasSuffix(","), weekdays.contains(String(parts[0].dropLast())),
            parts[5] == "GMT", parts[1].count == 2, let day = Int(parts[1]), let monthIndex = months.firstIndex(of: parts[2]),
            parts[3].count == 4, let year = Int(parts[3])
        else { return nil }
        let clock = parts[4].split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }), let hour = Int(clock[0]), let minute = Int(clock[1]),
            let second = Int(clock[2]), hour < 24, minute < 60, second < 60,
            (1...RFC3339.daysIn(month: monthIndex + 1, year: year)).contains(day)
        else { return nil }
        let days = RFC3339.daysFromCivil(year: year, month: monthIndex + 1, day: day)
        let date = Date(timeIntervalSince1970: TimeInterval(days * 86400 + hour * 3600 + minute * 60 + second))
        return UTCTime(date).http == text ? date : nil
    }

    private func pad(_ value: Int, _ width: Int = 2) -> String {
        let text = String(value)
        return String(repeating: "0", count: max(0, width - text.count)) + text
    }

    /// Howard Hinnant's days-to-civil algorithm (proleptic Gregorian).
    static func civil(fromDays days: Int) -> (Int, Int, Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }
}
