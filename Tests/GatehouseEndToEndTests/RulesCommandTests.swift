import Foundation
import Testing

/// `gatehouse rules` at the host, with the built binary on SQLite: a rule put, listed and removed; a
/// refused expression names line:column and changes nothing; the versions listed, one restored, a
/// window replayed; an expression evaluated offline.
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

        // Each change published a version; the first comes back as the third.
        let versions = try Peers.expectSuccess(try run(["rules", "versions", appKey]), "versions").split(separator: "\n")
        #expect(versions.count == 2 && versions[0].hasPrefix("2\t") && versions[0].contains("risk.rule.remove"), "\(versions)")
        #expect(try Peers.expectSuccess(try run(["rules", "restore", appKey, "1"]), "restore").contains("restored as version 3"))
        #expect(try Peers.expectSuccess(try run(["rules", "list", appKey]), "list").hasPrefix("busy\t"))
        let proposal = #"[{"name":"all","when":"true","then":{"decide":"reject"}}]"#
        let replayed = try Peers.expectSuccess(
            try run(["rules", "replay", appKey, "--from", "2000-01-01T00:00:00Z", "--to", "2100-01-01T00:00:00Z", "--policy-rules", proposal]),
            "replay"
        )
        #expect(replayed.contains(": completed, 0 of 0 decisions") && replayed.contains("rule all: 0 hits"), "\(replayed)")
        let backwards = try run(["rules", "replay", appKey, "--from", "2100-01-01T00:00:00Z", "--to", "2000-01-01T00:00:00Z"])
        #expect(backwards.status != 0 && backwards.errors.contains("from is before to"), "\(backwards.errors)")

        let evaluated = try Peers.expectSuccess(try run(["rules", "evaluate", "--expression", "size('héllo') + 1"]), "evaluate")
        #expect(evaluated.contains(#""value":6"#))
    }
}
