import Foundation

/// Per-app knobs of the device-risk flow.
public struct AppSettings: Equatable, Sendable {
    public static let ttlRange = ZToken.ttlRange
    public static let retentionRange: ClosedRange<Int> = 1...3650
    public static let standard = AppSettings(ztokenTTLSeconds: 300, retentionDays: 30)

    /// How long an issued ztoken stays usable (30 s to 1 h; 5 minutes by default).
    public var ztokenTTLSeconds: Int
    /// How many days decisions are kept before the purger removes them.
    public var retentionDays: Int

    public init(ztokenTTLSeconds: Int, retentionDays: Int) {
        self.ztokenTTLSeconds = ztokenTTLSeconds
        self.retentionDays = retentionDays
    }

    /// The decisions made before this time may be removed at `now`. Retention counts whole UTC days:
    /// a decision made on day D goes when day D + retentionDays + 1 begins, with every other decision
    /// of its day, so that on PostgreSQL the day's partition is dropped whole instead of row by row.
    public func oldestDecisionKept(at now: Date) -> Date {
        let today = (now.timeIntervalSince1970 / 86_400).rounded(.down) * 86_400
        return Date(timeIntervalSince1970: today - 86_400 * Double(retentionDays))
    }

    /// Applies an operator's change, refusing values outside their ranges.
    public func changing(ztokenTTLSeconds ttl: Int?, retentionDays days: Int?) throws(DomainError) -> AppSettings {
        var updated = self
        if let ttl {
            guard Self.ttlRange.contains(ttl) else {
                throw DomainError(.invalidSettings, "ztokenTtlSeconds is from 30 to 3600.", field: "ztokenTtlSeconds")
            }
            updated.ztokenTTLSeconds = ttl
        }
        if let days {
            guard Self.retentionRange.contains(days) else {
                throw DomainError(.invalidSettings, "retentionDays is from 1 to 3650.", field: "retentionDays")
            }
            updated.retentionDays = days
        }
        return updated
    }
}
