import Foundation
import GatehouseCore

/// A PostgreSQL table kept as time ranges of one width (migration 0014), so that retention drops a
/// range whole instead of deleting its rows one by one. Gatehouse keeps the ranges itself rather than
/// through pg_partman: the rule is a few lines (below), and an extension would be one more thing each
/// operator's PostgreSQL must have installed.
///
/// Ranges start at multiples of `width` seconds since 1970, so a day is a UTC day, and are named by
/// their start: `risk_decisions_p2026112400`. The rows of the table from before the migration form
/// the range `<table>_before_<bound>` (everything before that bound), and `<table>_default` catches a
/// row outside every range (a clock far off, or ranges not yet created); neither is created here.
struct PartitionedTable: Sendable, Equatable {
    let name: String
    /// The time column the ranges are over.
    let key: String
    let width: Int
    /// Ranges kept ready past the current one: inserts never wait for a range to be created, and a
    /// keeper that stops for less than that long costs nothing.
    let ahead: Int
    /// How long past its key a row must stay (expiring tables); decisions go by their app's retention.
    let grace: TimeInterval

    static let day = 86_400
    static let sixHours = 21_600

    static let decisions = PartitionedTable(name: "risk_decisions", key: "decided_at", width: day, ahead: 2, grace: 0)

    /// The expiring tables, keyed by their expiry. A consumed ztoken's id stays past its expiry by the
    /// clock skew between instances; a captcha pass an hour, so that idempotent siteverify retries
    /// find it, and its challenge (which the pass is read with) an hour past the pass's lifetime.
    static let consumedZTokens = expiringTable("consumed_ztokens", grace: ZToken.clockSkew)
    static let sdkNonces = expiringTable("sdk_nonces", grace: 0)
    static let attestSolutions = expiringTable("attest_solutions", grace: 0)
    static let signatureFailures = expiringTable("signature_failures", grace: 0)
    static let captchaPasses = expiringTable("captcha_passes", grace: captchaGrace)
    static let captchaChallenges = expiringTable("captcha_challenges", grace: captchaGrace + CaptchaPass.lifetimeSeconds)

    static let expiring = [consumedZTokens, sdkNonces, attestSolutions, signatureFailures, captchaPasses, captchaChallenges]

    private static func expiringTable(_ name: String, grace: TimeInterval) -> PartitionedTable {
        PartitionedTable(name: name, key: "expires_at", width: sixHours, ahead: 2, grace: grace)
    }

    static let captchaGrace: TimeInterval = 3_600

    static let all = [decisions] + expiring

    var defaultPartition: String { name + "_default" }

    /// One range of this table.
    struct Range: Sendable, Equatable {
        let name: String
        let from: Date
        let to: Date
    }

    /// What to do to a table's ranges at `now`: create the missing ones from the range before the
    /// current to `ahead` past it, and drop those that end at or before `horizon`.
    struct Plan: Sendable, Equatable {
        var create: [Range] = []
        var drop: [String] = []
    }

    /// - Parameters:
    ///   - existing: the names of the table's partitions.
    ///   - horizon: every row before it may go.
    func plan(existing: [String], at now: Date, horizon: Date) -> Plan {
        var plan = Plan()
        var starts = Set<Int>()
        var before: Int?
        for child in existing {
            switch parse(child) {
            case .range(let start):
                starts.insert(start)
                if start + width <= Self.seconds(horizon) { plan.drop.append(child) }
            case .before(let bound):
                before = max(before ?? bound, bound)
                if bound <= Self.seconds(horizon) { plan.drop.append(child) }
            case nil:
                continue
            }
        }
        let current = Self.floor(Self.seconds(now), to: width)
        for index in -1...ahead {
            let start = current + index * width
            guard !starts.contains(start), start >= before ?? .min, start + width > Self.seconds(horizon) else { continue }
            plan.create.append(Range(name: rangeName(start: start), from: Self.date(start), to: Self.date(start + width)))
        }
        return plan
    }

    enum Partition: Equatable {
        /// A range from `start` (seconds since 1970) for `width`.
        case range(start: Int)
        /// Everything before `bound`: the table's rows from before the migration.
        case before(bound: Int)
    }

    /// What a partition's name says it holds; nil for the default partition and any other name.
    func parse(_ child: String) -> Partition? {
        if let stamp = child.dropping(prefix: name + "_p"), let start = Self.parseStamp(stamp), start % width == 0 {
            return .range(start: start)
        }
        if let stamp = child.dropping(prefix: name + "_before_"), let bound = Self.parseStamp(stamp) { return .before(bound: bound) }
        return nil
    }

    func rangeName(start: Int) -> String { name + "_p" + Self.stamp(start) }

    /// `yyyyMMddHH` in UTC.
    static func stamp(_ seconds: Int) -> String {
        let parts = utc.dateComponents([.year, .month, .day, .hour], from: date(seconds))
        return String(format: "%04d%02d%02d%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0, parts.hour ?? 0)
    }

    /// The start a `yyyyMMddHH` names; nil for anything that does not format back to itself.
    static func parseStamp<S: StringProtocol>(_ text: S) -> Int? {
        guard text.utf8.count == 10, text.utf8.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { return nil }
        let digits = Array(text.utf8).map { Int($0 - 0x30) }
        func number(_ range: Swift.Range<Int>) -> Int { digits[range].reduce(0) { $0 * 10 + $1 } }
        let parts = DateComponents(year: number(0..<4), month: number(4..<6), day: number(6..<8), hour: number(8..<10))
        guard let start = utc.date(from: parts).map(seconds), stamp(start) == String(text) else { return nil }
        return start
    }

    private static let utc: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC") ?? calendar.timeZone
        return calendar
    }()

    static func seconds(_ date: Date) -> Int { Int(date.timeIntervalSince1970.rounded(.down)) }
    static func date(_ seconds: Int) -> Date { Date(timeIntervalSince1970: TimeInterval(seconds)) }
    static func floor(_ value: Int, to width: Int) -> Int { Int((Double(value) / Double(width)).rounded(.down)) * width }
}

extension String {
    fileprivate func dropping(prefix: String) -> Substring? {
        hasPrefix(prefix) ? dropFirst(prefix.count) : nil
    }
}
