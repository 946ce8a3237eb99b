import Foundation
import GatehouseCore

/// The console's sign-in, slowed for a guesser: past `rule.limit` refused tokens in a minute from one
/// address, or starting with the same characters (one token guessed from many addresses), every
/// sign-in from there is answered 429 with `Retry-After` until the minute is over, right token or
/// wrong. Each instance counts its own, as the other rate limits do.
public actor SignInThrottle {
    public static let rule = RateLimiter.Rule(limit: 5, windowSeconds: 60)
    /// How much of a presented token names it for the count: `gat_` and eight characters.
    static let prefixLength = 12

    private var failures = RateLimiter(maximumKeys: 20_000)

    public init() {}

    /// Seconds to wait before this sign-in may be tried, or nil when it may be now.
    public func retryAfter(address: String?, token: String, at now: Date) -> Int? {
        for key in Self.keys(address: address, token: token) {
            if case .limited(let seconds) = failures.check(key, rule: Self.rule, at: now) { return seconds }
        }
        return nil
    }

    /// Counts a refused sign-in against its address and its token's first characters.
    public func failed(address: String?, token: String, at now: Date) {
        for key in Self.keys(address: address, token: token) { _ = failures.admit(key, rule: Self.rule, at: now) }
    }

    static func keys(address: String?, token: String) -> [String] {
        ["address:\(address ?? "unknown")", "prefix:\(token.prefix(prefixLength))"]
    }
}
