import PostgresNIO
import _ConnectionPoolModule

/// What a failed statement says about its host: whether the host is gone or no longer takes writes
/// (so another must be found), and whether the statement certainly changed nothing (so it may run
/// again there). When in doubt, "changed nothing" is false: a write whose commit may have landed is
/// the caller's to report as unknown (a 503), never to repeat.
struct HostFailure {
    let hostUnusable: Bool
    let nothingChanged: Bool
    let reason: String

    init(_ error: any Error) {
        switch error {
        case let transaction as PostgresTransactionError:
            // A transaction that never reached its commit was rolled back by the server (or never began).
            if let begin = transaction.beginError {
                self = HostFailure(begin)
            } else if transaction.commitError == nil, let closure = transaction.closureError {
                let inner = HostFailure(closure)
                self = HostFailure(hostUnusable: inner.hostUnusable, nothingChanged: inner.hostUnusable, reason: inner.reason)
            } else {
                let inner = transaction.commitError.map(HostFailure.init)
                self = HostFailure(hostUnusable: inner?.hostUnusable ?? false, nothingChanged: false, reason: inner?.reason ?? "commit failed")
            }
        case let postgres as PSQLError:
            self = HostFailure(postgres)
        case is ConnectionPoolError:
            self = HostFailure(hostUnusable: true, nothingChanged: true, reason: "no connection to the host")
        default:
            self = HostFailure(hostUnusable: false, nothingChanged: false, reason: String(describing: type(of: error)))
        }
    }

    private init(_ error: PSQLError) {
        if let state = error.serverInfo?[.sqlState] {
            switch state {
            // read_only_sql_transaction: a standby, or a primary being demoted; the statement was refused.
            case "25006": self = HostFailure(hostUnusable: true, nothingChanged: true, reason: "read-only")
            // cannot_connect_now: the server is starting or stopping; no session was made.
            case "57P03": self = HostFailure(hostUnusable: true, nothingChanged: true, reason: "starting or stopping")
            // admin_shutdown, crash_shutdown: the session ended under the statement.
            case "57P01", "57P02": self = HostFailure(hostUnusable: true, nothingChanged: false, reason: "shut down")
            default: self = HostFailure(hostUnusable: false, nothingChanged: false, reason: "SQLSTATE \(state)")
            }
            return
        }
        switch error.code {
        case .serverClosedConnection, .connectionError, .uncleanShutdown, .clientClosedConnection:
            self = HostFailure(hostUnusable: true, nothingChanged: false, reason: "connection lost")
        default:
            self = HostFailure(hostUnusable: false, nothingChanged: false, reason: String(describing: error.code))
        }
    }

    private init(hostUnusable: Bool, nothingChanged: Bool, reason: String) {
        self.hostUnusable = hostUnusable
        self.nothingChanged = nothingChanged
        self.reason = reason
    }
}
