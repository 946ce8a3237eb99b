import Foundation

/// Parses RFC 3339 date-times exactly as JSON Schema's `date-time` format allows them: fractional
/// seconds of any length, `Z`, `z` or any `±hh:mm` offset, `T`, `t` or a space. Foundation's ISO 8601
/// parsers refuse some of these (odd offsets, long fractions), and a filter a client may legally send
/// must not be a 400.
public enum RFC3339 {
    public static func parse(_ text: String) -> Date? {
        guard let (seconds, nanos) = instant(text) else { return nil }
        return Date(timeIntervalSince1970: Double(seconds) + Double(nanos) / 1e9)
    }

    /// The instant exactly: seconds since 1970 and nanoseconds (digits past the ninth dropped), for a
    /// rule's `timestamp("...")`, which a `Date`'s double would round.
    public static func instant(_ text: String) -> (seconds: Int64, nanos: Int32)? {
        let bytes = Array(text.utf8)
        var index = 0
        func digits(_ count: Int) -> Int? {
            guard index + count <= bytes.count else { return nil }
            var value = 0
            for byte in bytes[index..<(index + count)] {
                guard (0x30...0x39).contains(byte) else { return nil }
                value = value * 10 + Int(byte - 0x30)
            }
            index += count
            return value
        }
        func expect(_ allowed: Set<UInt8>) -> Bool {
            guard index < bytes.count, allowed.contains(bytes[index]) else { return false }
            index += 1
            return true
        }
        guard let year = digits(4), expect([0x2D]), let month = digits(2), expect([0x2D]), let day = digits(2),
            expect([0x54, 0x74, 0x20]), let hour = digits(2), expect([0x3A]), let minute = digits(2), expect([0x3A]),
            let second = digits(2),
            (1...12).contains(month), (1...daysIn(month: month, year: year)).contains(day), hour < 24, minute < 60, second <= 60
        else { return nil }
        var nanos = 0
        if index < bytes.count, bytes[index] == 0x2E {
            index += 1
            var scale = 100_000_000
            let start = index
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) {
                nanos += Int(bytes[index] - 0x30) * scale
                scale /= 10
                index += 1
            }
            guard index > start else { return nil }
        }
        var offset = 0
        if expect([0x5A, 0x7A]) {
            offset = 0
        } else {
            guard index < bytes.count, bytes[index] == 0x2B || bytes[index] == 0x2D else { return nil }
            let sign = bytes[index] == 0x2D ? -1 : 1
            index += 1
            guard let offsetHour = digits(2), expect([0x3A]), let offsetMinute = digits(2), offsetHour < 24, offsetMinute < 60 else { return nil }
            offset = sign * (offsetHour * 3600 + offsetMinute * 60)
        }
        guard index == bytes.count else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        let seconds = days * 86_400 + hour * 3600 + minute * 60 + min(second, 59) - offset
        return (Int64(seconds), Int32(nanos))
    }

    /// A UTC instant's calendar fields; `weekday` 0 for Sunday.
    public struct CivilTime: Sendable, Equatable {
        public let year, month, day, hour, minute, second, weekday: Int
    }

    public static func civil(seconds: Int64) -> CivilTime {
        let days = Int(seconds >= 0 ? seconds / 86_400 : (seconds - 86_399) / 86_400)
        let rest = Int(seconds - Int64(days) * 86_400)
        let (year, month, day) = UTCTime.civil(fromDays: days)
        let weekday = ((days % 7) + 11) % 7  // 1970-01-01 was a Thursday
        return CivilTime(
            year: year,
            month: month,
            day: day,
            hour: rest / 3600,
            minute: rest % 3600 / 60,
            second: rest % 60,
            weekday: weekday
        )
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    /// Days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's algorithm).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month + (month > 2 ? -3 : 9)) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
