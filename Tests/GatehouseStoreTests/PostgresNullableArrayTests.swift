import Foundation
import GatehouseTestSupport
import Testing

@testable import GatehouseStore

/// `PostgresNullableArray` against PostgreSQL's own reader of binary arrays (`array_recv`): what goes
/// in through `unnest` comes out element for element, NULLs where they stood, and a malformed array
/// would be refused by the server, not stored.
@Suite struct PostgresNullableArrayTests {
    @Test func elementsAndNullsComeBackWhereTheyStood() async throws {
        guard TestStoreKind.available.contains(.postgres) else { return }
        try await withMigratedStore(.postgres) { (store, _) async throws in
            let texts: [String?] = [nil, "a", "", "ünï \u{1F600} 'quoted' \"too\"", nil, String(repeating: "x", count: 5_000)]
            let bytes: [[UInt8]?] = [[0, 1, 255], nil, [], nil, [7], Array(repeating: 0xAB, count: 3_000)]
            let rows = try await store.database.query(
                """
                SELECT n, t, b FROM unnest(\(.optionalTexts(texts))::text[], \(.optionalBytes(bytes))::bytea[]) WITH ORDINALITY AS u(t, b, n)
                ORDER BY n
                """
            )
            #expect(try rows.map { try $0.int("n") } == Array(1...6))
            #expect(try rows.map { try $0.optionalText("t") } == texts)
            #expect(try rows.map { row in try row.isNull("b") ? nil : try row.bytes("b") } == bytes)

            let allNull = try await store.database.query(
                "SELECT count(*) AS n, count(t) AS present FROM unnest(\(.optionalTexts([nil, nil, nil]))::text[]) AS u(t)"
            ).first
            #expect(try allNull?.int("n") == 3 && allNull?.int("present") == 0)
            let noNull = try await store.database.query("SELECT array_position(\(.optionalTexts(["a", "b"]))::text[], NULL) IS NULL AS none").first
            #expect(try noNull?.int("none") == 1)
            let empty = try await store.database.query(
                "SELECT cardinality(\(.optionalTexts([]))::text[]) AS texts, cardinality(\(.optionalBytes([]))::bytea[]) AS bytes"
            ).first
            #expect(try empty?.int("texts") == 0 && empty?.int("bytes") == 0)
        }
    }
}
