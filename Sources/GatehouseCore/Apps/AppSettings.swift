/// Per-app knobs of the device-risk flow.
public struct AppSettings: Equatable, Sendable {
    public static let ttlRange = ZToken.ttlRange
    public static let retentionRange: ClosedRange<Int> = 1...3650
    public static let standard = AppSettings(ztokenTTLSeconds: 300, retentionDays: 30)

    /// How long an issued ztoken stays usable (30 s to 1 h; 5 minutes by default).
    public var ztokenTTLSeconds: Int
    /// How many days issued ztokens and decisions are kept before the purger removes them.
    public var retentionDays: Int

    public init(ztokenTTLSeconds: Int, retentionDays: Int) {
        self.ztokenTTLSeconds = ztokenTTLSeconds
        self.retentionDays = retentionDays
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
