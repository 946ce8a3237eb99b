/// How much the client says, as the seed SDKs' log levels: silent by default.
public enum GatehouseLogLevel: Int, Sendable, Comparable, CaseIterable {
    case none = 0
    case error
    case warn
    case info
    case debug

    /// Levels order by verbosity: `.none` < `.error` < `.warn` < `.info` < `.debug`.
    public static func < (lhs: GatehouseLogLevel, rhs: GatehouseLogLevel) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// Where log lines go, and which of them. Tokens and secrets are never written in full: callers
/// pass them through `redacted`.
struct GatehouseLogger: Sendable {
    let level: GatehouseLogLevel
    let sink: @Sendable (GatehouseLogLevel, String) -> Void

    func log(_ level: GatehouseLogLevel, _ message: @autoclosure () -> String) {
        guard level != .none, level <= self.level else { return }
        sink(level, message())
    }

    /// The first 6 characters and the length: enough to tell tokens apart in a log, not to use one.
    static func redacted(_ secret: String) -> String {
        "\(secret.prefix(6))…(\(secret.count))"
    }
}
