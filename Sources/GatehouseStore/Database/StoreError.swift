/// Why the store could not do what it was asked. One error type for the Store layer; drivers translate
/// their native errors into it so nothing above knows which database answered.
public enum StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The row asked for does not exist.
    case notFound(String)
    /// A unique key or a conditional update refused the write; nothing was written.
    case conflict(String)
    /// The database could not be reached or refused the operation for a reason of its own.
    case unavailable(String)
    /// A stored row does not have the shape the code expects (a bug or a hand-edited database).
    case corruptRow(String)
    /// A migration failed; its transaction was rolled back.
    case migrationFailed(version: Int, reason: String)

    public var description: String {
        switch self {
        case .notFound(let what): "not found: \(what)"
        case .conflict(let what): "conflict: \(what)"
        case .unavailable(let reason): "database unavailable: \(reason)"
        case .corruptRow(let reason): "corrupt row: \(reason)"
        case .migrationFailed(let version, let reason): "migration \(version) failed: \(reason)"
        }
    }
}
