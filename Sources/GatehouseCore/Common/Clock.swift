import Foundation

/// The one source of "now" for every decision Gatehouse makes; tests pass a fixed one.
public protocol GatehouseClock: Sendable {
    func now() -> Date
}

/// Wall-clock time, truncated to whole milliseconds so that both stores round-trip it exactly.
public struct SystemClock: GatehouseClock {
    public init() {}

    public func now() -> Date {
        Date.truncatedToMilliseconds(Date())
    }
}

/// A clock that says what it is told; for tests and for replaying decisions.
public final class FixedClock: GatehouseClock, @unchecked Sendable {
    private let lock = NSLock()
    private var current: Date

    public init(_ date: Date) {
        self.current = Date.truncatedToMilliseconds(date)
    }

    public func now() -> Date {
        lock.withLock { current }
    }

    public func advance(by seconds: TimeInterval) {
        lock.withLock { current = Date.truncatedToMilliseconds(current.addingTimeInterval(seconds)) }
    }
}

extension Date {
    /// Milliseconds since 1970: the precision both stores keep.
    public var millisecondsSince1970: Int64 {
        Int64((timeIntervalSince1970 * 1000).rounded(.down))
    }

    public init(millisecondsSince1970 milliseconds: Int64) {
        self.init(timeIntervalSince1970: TimeInterval(milliseconds) / 1000)
    }

    static func truncatedToMilliseconds(_ date: Date) -> Date {
        Date(millisecondsSince1970: date.millisecondsSince1970)
    }
}
