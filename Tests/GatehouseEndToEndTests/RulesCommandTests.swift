import Foundation
import Testing

/// `gatehouse rules` at the host, with the built binary on SQLite: a rule put, listed and removed; a
/// refused expression names line:column and changes nothing; an expression evaluated offline.
@Suite struct RulesCommandTests {
    @Test func policyRulesFromTheCommandLine() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-rules-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let binary = try BuiltServer.executable()
        let environment = ["GATEHOUSE_DATA_DIR": folder.path]
        func run(_ arguments: [String]) throws -> (status: Int32, output: String, errors: String) {
            try Peers.run(binary, arguments, environment: environment)
        }
        let created = try Peers.expectSuccess(try run(["app", "create", "--name", "Shop", "--platforms", "ios"]), "app create")
        let appKey = try #require(created.split(separator: "\n").first?.split(separator: " ").last.map(String.init))

        try Peers.expectSuccess(
            try run(["rules", "put", appKey, "--name", "busy", "--when", "velocity.ipDevicesLastHour > 20", "--decide", "review"]),
            "put"
        )
        let refused = try run(["rules", "put", appKey, "--name", "bad", "--when", "score >\n  nosuch", "--decide", "review"])
        #expect(refused.status != 0 && refused.errors.contains("2:3:"), "\(refused.errors)")
        let listed = try Peers.expectSuccess(try run(["rules", "list", appKey]), "list")
        #expect(listed.hasPrefix("busy\tenforce\tevery event\tdecide review\tvelocity.ipDevicesLastHour > 20"), "\(listed)")
        try Peers.expectSuccess(try run(["rules", "remove", appKey, "--name", "busy"]), "remove")
        #expect(try Peers.expectSuccess(try run(["rules", "list", appKey]), "list").isEmpty)

        let evaluated = try Peers.expectSuccess(try run(["rules", "evaluate", "--expression", "size('héllo') + 1"]), "evaluate")
        #expect(evaluated.contains(#""value":6"#))
    }
}
