import Foundation
import Synchronization

#if canImport(Glibc)
import Glibc
#endif

/// The `Date` header's value (RFC 9110 5.6.7, IMF-fixdate), made once a second. Hummingbird sets it
/// (and `Server`) on every response of the router; the answers given before the router
/// (`AdmissionHandler`) carry the same two, from here. It is the transport's time of the answer, not
/// a time the service decides with, so it reads the system's clock as Hummingbird's does.
final class HTTPDateText: Sendable {
    /// The `Server` header of every answer, the router's and the event loop's.
    static let serverName = "gatehouse"
    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
    private let cached = Mutex<(second: Int, text: String)>((-1, ""))

    func now() -> String {
        let second = Int(Date().timeIntervalSince1970)
        return cached.withLock { cached in
            if cached.second != second { cached = (second, Self.text(second)) }
            return cached.text
        }
    }

    static func text(_ second: Int) -> String {
        var time = time_t(second)
        var parts = tm()
        gmtime_r(&time, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(parts.tm_year + 1900) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
