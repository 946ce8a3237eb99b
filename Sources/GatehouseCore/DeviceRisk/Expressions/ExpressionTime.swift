/// Times and durations: `timestamp("2026-11-26T10:00:00Z")` (RFC 3339), `duration("1h30m")` (Go's
/// syntax, as cel-go parses it), their arithmetic within range, and the UTC accessors.
extension ExpressionFunctions {
    typealias Timestamp = ExpressionValue.Timestamp
    typealias Duration = ExpressionValue.Duration

    static let times: [ExpressionOverload] = [
        overload("timestamp", [.string], .timestamp) { v, _ throws(EvaluationError) in
            guard let (seconds, nanos) = RFC3339.instant(v[0].string), let stamp = Timestamp(seconds: seconds, nanos: nanos) else {
                throw EvaluationError("timestamp '\(v[0].string.prefix(60))' is not RFC 3339 within years 1 to 9999")
            }
            return .timestamp(stamp)
        },
        overload("timestamp", [.timestamp], .timestamp) { v, _ in v[0] },
        overload("duration", [.string], .duration) { v, _ throws(EvaluationError) in .duration(try parseDuration(v[0].string)) },
        overload("duration", [.duration], .duration) { v, _ in v[0] },
        overload("_+_", [.timestamp, .duration], .timestamp) { v, _ throws(EvaluationError) in .timestamp(try shift(v[0], by: v[1], sign: 1)) },
        overload("_+_", [.duration, .timestamp], .timestamp) { v, _ throws(EvaluationError) in .timestamp(try shift(v[1], by: v[0], sign: 1)) },
        overload("_-_", [.timestamp, .duration], .timestamp) { v, _ throws(EvaluationError) in .timestamp(try shift(v[0], by: v[1], sign: -1)) },
        overload("_+_", [.duration, .duration], .duration) { v, _ throws(EvaluationError) in
            let (sum, over) = v[0].nanoseconds.addingReportingOverflow(v[1].nanoseconds)
            if over { throw overflow() }
            return .duration(Duration(nanoseconds: sum))
        },
        overload("_-_", [.duration, .duration], .duration) { v, _ throws(EvaluationError) in
            let (difference, over) = v[0].nanoseconds.subtractingReportingOverflow(v[1].nanoseconds)
            if over { throw overflow() }
            return .duration(Duration(nanoseconds: difference))
        },
        overload("_-_", [.timestamp, .timestamp], .duration) { v, _ throws(EvaluationError) in
            guard case .timestamp(let a) = v[0], case .timestamp(let b) = v[1] else { throw overflow() }
            let (seconds, over) = (a.seconds - b.seconds).multipliedReportingOverflow(by: 1_000_000_000)
            let (total, over2) = seconds.addingReportingOverflow(Int64(a.nanos) - Int64(b.nanos))
            if over || over2 { throw overflow() }
            return .duration(Duration(nanoseconds: total))
        },
        overload("getHours", [.duration], .int, member: true) { v, _ in .int(v[0].nanoseconds / 3_600_000_000_000) },
        overload("getMinutes", [.duration], .int, member: true) { v, _ in .int(v[0].nanoseconds / 60_000_000_000) },
        overload("getSeconds", [.duration], .int, member: true) { v, _ in .int(v[0].nanoseconds / 1_000_000_000) },
        overload("getMilliseconds", [.duration], .int, member: true) { v, _ in .int(v[0].nanoseconds / 1_000_000) },
        overload("getFullYear", [.timestamp], .int, member: true) { v, _ in civil(v[0]) { $0.year } },
        overload("getMonth", [.timestamp], .int, member: true) { v, _ in civil(v[0]) { $0.month - 1 } },
        overload("getDate", [.timestamp], .int, member: true) { v, _ in civil(v[0]) { $0.day } },
        overload("getDayOfMonth", [.timestamp], .int, member: true) { v, _ in civil(v[0]) { $0.day - 1 } },
        overload("getDayOfWeek", [.timestamp], .int, member: true) { v, _ in civil(v[0]) { $0.weekday } },
        overload("getHours", [.timestamp], .int, member: true) { v, _ in civil(v[0]) { $0.hour } },
        overload("getMinutes", [.timestamp], .int, member: true) { v, _ in civil(v[0]) { $0.minute } },
        overload("getSeconds", [.timestamp], .int, member: true) { v, _ in civil(v[0]) { $0.second } },
    ]

    /// A field of a timestamp's UTC calendar date and time. (Each accessor is a closure of its own that
    /// captures nothing, which `OverloadSet` relies on.)
    static func civil(_ stamp: ExpressionValue, _ field: (RFC3339.CivilTime) -> Int) -> ExpressionValue {
        guard case .timestamp(let t) = stamp else { return .int(0) }
        return .int(Int64(field(RFC3339.civil(seconds: t.seconds))))
    }

    static func shift(_ stamp: ExpressionValue, by span: ExpressionValue, sign: Int64) throws(EvaluationError) -> Timestamp {
        guard case .timestamp(let t) = stamp else { throw overflow() }
        let (nanos, over) = span.nanoseconds.multipliedReportingOverflow(by: sign)
        if over { throw overflow() }
        var seconds = t.seconds + nanos / 1_000_000_000
        var rest = Int64(t.nanos) + nanos % 1_000_000_000
        if rest < 0 {
            rest += 1_000_000_000
            seconds -= 1
        } else if rest >= 1_000_000_000 {
            rest -= 1_000_000_000
            seconds += 1
        }
        guard let shifted = Timestamp(seconds: seconds, nanos: Int32(rest)) else { throw EvaluationError("timestamp out of range") }
        return shifted
    }

    /// Go's duration syntax: an optional sign, then numbers (with an optional fraction) each with a
    /// unit among `h`, `m`, `s`, `ms`, `us` (or `µs`) and `ns`; within the range of 64-bit nanoseconds.
    static func parseDuration(_ text: String) throws(EvaluationError) -> Duration {
        let refusal = EvaluationError("duration '\(text.prefix(60))' is not a Go duration within about 292 years")
        var scalars = Substring(text).unicodeScalars[...]
        var negative = false
        if let sign = scalars.first, sign == "-" || sign == "+" {
            negative = sign == "-"
            scalars = scalars.dropFirst()
        }
        if String(scalars) == "0" { return Duration(nanoseconds: 0) }
        guard !scalars.isEmpty else { throw refusal }
        let units: [(String, Double)] = [("ns", 1), ("us", 1e3), ("µs", 1e3), ("μs", 1e3), ("ms", 1e6), ("s", 1e9), ("m", 60e9), ("h", 3600e9)]
        var total = 0.0
        while !scalars.isEmpty {
            let number = scalars.prefix { ("0"..."9").contains($0) || $0 == "." }
            guard !number.isEmpty, String(number) != ".", let value = Double(String(number)) else { throw refusal }
            scalars = scalars.dropFirst(number.count)
            let unitText = String(scalars.prefix { !("0"..."9").contains($0) && $0 != "." })
            guard let unit = units.first(where: { $0.0 == unitText }) else { throw refusal }
            scalars = scalars.dropFirst(unitText.unicodeScalars.count)
            total += value * unit.1
        }
        guard total < 9.223372036854775e18 else { throw refusal }
        return Duration(nanoseconds: Int64((negative ? -total : total).rounded(.towardZero)))
    }
}

extension ExpressionValue {
    var nanoseconds: Int64 { if case .duration(let d) = self { d.nanoseconds } else { 0 } }
}
