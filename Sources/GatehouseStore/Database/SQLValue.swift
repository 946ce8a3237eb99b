import Foundation
import GatehouseCore

/// A bound parameter or a column value, in the handful of types Gatehouse stores. Drivers decide how each
/// maps to their database (a UUID is `uuid` in PostgreSQL and text in SQLite; a date is `timestamptz`
/// there and integer milliseconds here).
enum SQLValue: Sendable, Equatable {
    case text(String)
    case int(Int64)
    case bytes([UInt8])
    case uuid(UUID)
    case date(Date)
    case null
    /// Arrays, bound by PostgreSQL only: a batch's values as one parameter each, so that a statement
    /// over many rows keeps one text (`unnest`) and can be prepared. SQLite refuses them.
    case texts([String])
    case ints([Int64])
    case uuids([UUID])
    case dates([Date])
    /// Arrays with NULL elements, for the optional columns of rows written through `unnest`.
    case optionalTexts([String?])
    case optionalBytes([[UInt8]?])

    static func optional(_ text: String?) -> SQLValue { text.map(SQLValue.text) ?? .null }
    static func optional(_ date: Date?) -> SQLValue { date.map(SQLValue.date) ?? .null }
    static func optional(_ uuid: UUID?) -> SQLValue { uuid.map(SQLValue.uuid) ?? .null }
}

/// One result row, decoded eagerly by the driver, read by column name.
struct SQLRow: Sendable {
    let values: [String: SQLValue]

    private func value(_ column: String) throws(StoreError) -> SQLValue {
        guard let value = values[column] else { throw .corruptRow("missing column \(column)") }
        return value
    }

    func text(_ column: String) throws(StoreError) -> String {
        guard case .text(let text) = try value(column) else { throw .corruptRow("\(column) is not text") }
        return text
    }

    func optionalText(_ column: String) throws(StoreError) -> String? {
        if case .null = try value(column) { return nil }
        return try text(column)
    }

    func int(_ column: String) throws(StoreError) -> Int64 {
        guard case .int(let int) = try value(column) else { throw .corruptRow("\(column) is not an integer") }
        return int
    }

    func optionalInt(_ column: String) throws(StoreError) -> Int64? {
        if case .null = try value(column) { return nil }
        return try int(column)
    }

    func bytes(_ column: String) throws(StoreError) -> [UInt8] {
        guard case .bytes(let bytes) = try value(column) else { throw .corruptRow("\(column) is not bytes") }
        return bytes
    }

    func uuid(_ column: String) throws(StoreError) -> UUID {
        switch try value(column) {
        case .uuid(let uuid): return uuid
        case .text(let text):
            guard let uuid = UUID(uuidString: text) else { throw .corruptRow("\(column) is not a UUID") }
            return uuid
        default: throw .corruptRow("\(column) is not a UUID")
        }
    }

    func optionalUUID(_ column: String) throws(StoreError) -> UUID? {
        if case .null = try value(column) { return nil }
        return try uuid(column)
    }

    func isNull(_ column: String) throws(StoreError) -> Bool {
        if case .null = try value(column) { return true }
        return false
    }

    func date(_ column: String) throws(StoreError) -> Date {
        switch try value(column) {
        case .date(let date): return date
        case .int(let milliseconds): return Date(millisecondsSince1970: milliseconds)
        default: throw .corruptRow("\(column) is not a timestamp")
        }
    }

    func optionalDate(_ column: String) throws(StoreError) -> Date? {
        if case .null = try value(column) { return nil }
        return try date(column)
    }
}
