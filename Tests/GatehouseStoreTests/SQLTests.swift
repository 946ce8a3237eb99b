import Foundation
import GatehouseCore
import GatehouseTestSupport
import Testing

@testable import GatehouseStore

/// The statement type: every interpolated value a parameter in the order it stands, embedded
/// statements renumbered, names only where named, and the same text for the same shape.
struct SQLTests {
    let app = UUID(uuidString: "8e1c6a7e-5b7a-4c1e-9d55-0a6c1f2b3c4d")!

    @Test func valuesBindInTheOrderTheyStand() {
        let sql: SQL = "SELECT * FROM apps WHERE app_id = \(app) AND name = \("it's; DROP TABLE apps") LIMIT \(5)"
        #expect(sql.text == "SELECT * FROM apps WHERE app_id = $1 AND name = $2 LIMIT $3")
        #expect(sql.binds == [.uuid(app), .text("it's; DROP TABLE apps"), .int(5)])
    }

    @Test func optionalsBindNullAndPlainTextNeverBecomesSQL() {
        let none: String? = nil
        let sql: SQL = "UPDATE t SET a = \(none), b = \("$1")"
        #expect(sql.text == "UPDATE t SET a = $1, b = $2")
        #expect(sql.binds == [.null, .text("$1")])
    }

    @Test func embeddedAndJoinedStatementsAreRenumbered() {
        let rows = (1...3).map { row -> SQL in "(\(row), \("r\(row)"))" }
        let sql: SQL = "INSERT INTO t (n, s) VALUES \(SQL.joined(rows, separator: ", ")) RETURNING \(identifier: "n")"
        #expect(sql.text == "INSERT INTO t (n, s) VALUES ($1, $2), ($3, $4), ($5, $6) RETURNING n")
        #expect(sql.binds == [.int(1), .text("r1"), .int(2), .text("r2"), .int(3), .text("r3")])
        var appended: SQL = "SELECT \(1)"
        appended.append(" WHERE a = \(2) AND b = \(3)")
        #expect(appended.text == "SELECT $1 WHERE a = $2 AND b = $3" && appended.binds == [.int(1), .int(2), .int(3)])
        let (left, right): (SQL, SQL) = ("SELECT \(7)", " + \(8)")
        #expect((left + right).text == "SELECT $1 + $2" && (left + right).binds == [.int(7), .int(8)])
    }

    @Test func theTextDependsOnTheShapeNotTheValues() {
        func statement(_ account: String, _ limit: Int) -> SQL { "SELECT 1 FROM t WHERE a = \(account) LIMIT \(limit)" }
        #expect(statement("alice", 3).text == statement("mallory'--", 99).text)
        #expect(statement("alice", 3).binds != statement("mallory'--", 99).binds)
    }

    @Test func namesAndLiteralsGoInAsText() {
        let (table, range) = ("risk_decisions", "risk_decisions_20261126")
        let start = Date(timeIntervalSince1970: 0)
        let sql: SQL = "ALTER TABLE \(identifier: table) ATTACH PARTITION \(identifier: range) FOR VALUES FROM (\(literal: start))"
        let expected = "ALTER TABLE risk_decisions ATTACH PARTITION risk_decisions_20261126 FOR VALUES FROM ('1970-01-01T00:00:00Z')"
        #expect(sql.text == expected)
        #expect(sql.binds.isEmpty)
        let columns: SQL = "INSERT INTO t (\(columns: ["app_id", "role_id"])) VALUES (\(1), \(2))"
        #expect(columns.text == "INSERT INTO t (app_id, role_id) VALUES ($1, $2)")
    }
}
