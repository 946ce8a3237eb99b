import Foundation
import GatehouseCore
import Synchronization

/// The `Date` header's value (RFC 9110 5.6.7, IMF-fixdate: `UTCTime.http`), made once a second.
/// Hummingbird sets it (and `Server`) on every response of the router; the answers given before the
/// router (`AdmissionHandler`) carry the same two, from here. It is the transport's time of the answer,
/// not a time the service decides with, so it reads the system's clock as Hummingbird's does.
final class HTTPDateText: Sendable {
    /// The `Server` header of every answer, the router's and the event loop's.
    static let serverName = "gatehouse"
    private let cached = Mutex<(second: Int, text: String)>((-1, ""))

    func now() -> String {
        let second = Int(Date().timeIntervalSince1970)
        return cached.withLock { cached in
            if cached.second != second { cached = (second, UTCTime(Date(timeIntervalSince1970: TimeInterval(second))).http) }
            return cached.text
        }
    }
}
