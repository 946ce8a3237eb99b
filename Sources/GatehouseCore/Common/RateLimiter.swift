import Foundation

/// Fixed-window request counting per key (an IP, a device), in memory. Each instance counts on its
/// own, so N instances admit up to N times the limit: an approximation, documented as such.
public struct RateLimiter: Sendable {
    public struct Rule: Sendable, Equatable {
        public let limit: Int
        public let windowSeconds: Double

        public init(limit: Int, windowSeconds: Double) {
            self.limit = limit
            self.windowSeconds = windowSeconds
        }
    }

    public enum Decision: Sendable, Equatable {
        case allowed
        /// Refused; the caller may retry after this many whole seconds.
        case limited(retryAfter: Int)
    }

    private var windows: [String: (start: Date, count: Int)] = [:]
    /// Beyond this many keys, windows that have ended are dropped, so memory stays bounded.
    let maximumKeys: Int

    public init(maximumKeys: Int = 100_000) {
        self.maximumKeys = maximumKeys
    }

    public mutating func admit(_ key: String, rule: Rule, at now: Date) -> Decision {
        var window = windows[key] ?? (now, 0)
        if now.timeIntervalSince(window.start) >= rule.windowSeconds { window = (now, 0) }
        guard window.count < rule.limit else {
            let remaining = rule.windowSeconds - now.timeIntervalSince(window.start)
            return .limited(retryAfter: max(1, Int(remaining.rounded(.up))))
        }
        window.count += 1
        windows[key] = window
        if windows.count > maximumKeys { prune(at: now, windowSeconds: rule.windowSeconds) }
        return .allowed
    }

    /// Whether `key` is over `rule` now, counting nothing: for limits on failures, which `admit` counts
    /// only when one happens.
    public func check(_ key: String, rule: Rule, at now: Date) -> Decision {
        guard let window = windows[key], now.timeIntervalSince(window.start) < rule.windowSeconds, window.count >= rule.limit else {
            return .allowed
        }
        return .limited(retryAfter: max(1, Int((rule.windowSeconds - now.timeIntervalSince(window.start)).rounded(.up))))
    }

    private mutating func prune(at now: Date, windowSeconds: Double) {
        windows = windows.filter { now.timeIntervalSince($0.value.start) < windowSeconds }
        // Still too many live keys (a flood of distinct addresses): forget the oldest half.
        if windows.count > maximumKeys {
            let kept = windows.sorted { $0.value.start > $1.value.start }.prefix(maximumKeys / 2)
            windows = Dictionary(uniqueKeysWithValues: kept.map { ($0.key, $0.value) })
        }
    }

    var trackedKeys: Int { windows.count }
}
