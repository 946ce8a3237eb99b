import Foundation
import GatehouseCore

/// A statement whose values are bound where they stand: `"SELECT * FROM apps WHERE app_key = \(key)"`
/// sends the key as a parameter, never as text, and a value cannot be bound to the wrong column
/// because the two are written together (positional `$1 ... $23` by hand is where a swapped argument
/// hides). The text carries `$n` for both databases; the SQLite driver binds `$n` by its number.
/// A `$` followed by digits in a statement's own text is therefore a placeholder: the store writes
/// none by hand (`SQLTests`), and a value never reaches the text, whatever it holds.
///
/// Why our own type rather than SQLKit's `SQLQueryString`: the store's two drivers, its bounded waits,
/// its hosts' failover and its prepared statements already sit on PostgresNIO and SQLiteNIO directly,
/// and take `SQLValue`s; SQLKit would add its own database abstraction, `Encodable` binds serialised
/// per query, and three packages (sql-kit, postgres-kit, sqlite-kit with async-kit) to build, for
/// the one thing this type does: keep a value beside its place in the text.
struct SQL: Sendable, Equatable, ExpressibleByStringInterpolation {
    private(set) var text: String
    private(set) var binds: [SQLValue]

    init(stringLiteral text: String) {
        self.text = text
        self.binds = []
    }

    init(stringInterpolation: StringInterpolation) {
        self.text = stringInterpolation.text
        self.binds = stringInterpolation.binds
    }

    /// Text that carries no value, read whole: a migration file's statement (shipped with the store),
    /// or a statement a test composes around another one's text.
    init(unbound text: String) {
        self.text = text
        self.binds = []
    }

    /// Appends another statement's text and values (its `$n` renumbered after this one's), in place:
    /// a batch of a few hundred rows is joined without copying what came before.
    mutating func append(_ other: SQL) {
        Self.append(other, to: &text, binds: &binds)
    }

    /// `other`'s text onto `text` with each `$n` moved past the `binds` already there, and its values.
    fileprivate static func append(_ other: SQL, to text: inout String, binds: inout [SQLValue]) {
        let offset = binds.count
        binds += other.binds
        guard offset > 0 else {
            text += other.text
            return
        }
        // Byte by byte: `$` and digits are ASCII, so their UTF-8 positions are the text's own, and walking
        // Characters here was 3% of a risk query's server samples (its decisions' rows are joined).
        let source = other.text
        let utf8 = source.utf8
        var index = utf8.startIndex
        while let dollar = utf8[index...].firstIndex(of: UInt8(ascii: "$")) {
            text += source[index..<dollar]
            var end = utf8.index(after: dollar)
            var number = 0
            while end < utf8.endIndex, case let digit = utf8[end], (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(digit), number < 1_000_000 {
                number = number * 10 + Int(digit - UInt8(ascii: "0"))
                end = utf8.index(after: end)
            }
            text += "$"
            if end > utf8.index(after: dollar) { text += String(number + offset) }
            index = end
        }
        text += source[index...]
    }

    static func + (lhs: SQL, rhs: SQL) -> SQL {
        var joined = lhs
        joined.append(rhs)
        return joined
    }

    /// The statements joined by `separator` (a `VALUES` list, an `OR` of conditions).
    static func joined(_ parts: [SQL], separator: String) -> SQL {
        var joined = SQL(stringLiteral: "")
        for (index, part) in parts.enumerated() {
            if index > 0 { joined.text += separator }
            joined.append(part)
        }
        return joined
    }

    struct StringInterpolation: StringInterpolationProtocol {
        fileprivate(set) var text = ""
        fileprivate(set) var binds: [SQLValue] = []

        init(literalCapacity: Int, interpolationCount: Int) {
            text.reserveCapacity(literalCapacity + interpolationCount * 3)
            binds.reserveCapacity(interpolationCount)
        }

        mutating func appendLiteral(_ literal: String) {
            text += literal
        }

        mutating func appendInterpolation(_ value: SQLValue) {
            binds.append(value)
            text += "$"
            text += String(binds.count)
        }

        mutating func appendInterpolation(_ text: String) { appendInterpolation(SQLValue.text(text)) }
        mutating func appendInterpolation(_ text: String?) { appendInterpolation(SQLValue.optional(text)) }
        mutating func appendInterpolation(_ int: Int) { appendInterpolation(SQLValue.int(Int64(int))) }
        mutating func appendInterpolation(_ int: Int64) { appendInterpolation(SQLValue.int(int)) }
        mutating func appendInterpolation(_ uuid: UUID) { appendInterpolation(SQLValue.uuid(uuid)) }
        mutating func appendInterpolation(_ uuid: UUID?) { appendInterpolation(SQLValue.optional(uuid)) }
        mutating func appendInterpolation(_ date: Date) { appendInterpolation(SQLValue.date(date)) }
        mutating func appendInterpolation(_ date: Date?) { appendInterpolation(SQLValue.optional(date)) }
        mutating func appendInterpolation(_ bytes: [UInt8]) { appendInterpolation(SQLValue.bytes(bytes)) }

        /// Another statement embedded here, its values bound after those before it.
        mutating func appendInterpolation(_ other: SQL) {
            SQL.append(other, to: &text, binds: &binds)
        }

        /// Text that is not a value: an identifier the store makes itself (a partition's name, a
        /// dialect's spelling). Never anything a caller sent.
        mutating func appendInterpolation(identifier: String) {
            precondition(identifier.utf8.allSatisfy { $0 == UInt8(ascii: "_") || (0x30...0x39).contains($0) || (0x61...0x7A).contains($0) })
            text += identifier
        }

        /// A list of column names, as `identifier:` checks each.
        mutating func appendInterpolation(columns: [String]) {
            for (index, column) in columns.enumerated() {
                if index > 0 { text += ", " }
                appendInterpolation(identifier: column)
            }
        }

        /// A time written into a statement that cannot take a parameter (a partition's bounds in
        /// `ATTACH PARTITION`): our own formatting of our own dates, never input.
        mutating func appendInterpolation(literal date: Date) {
            text += "'" + date.formatted(.iso8601) + "'"
        }

        /// Words chosen by the store among fixed spellings (a lock mode, a lock timeout).
        mutating func appendInterpolation(keyword: StaticString) {
            text += keyword.description
        }

    }
}
