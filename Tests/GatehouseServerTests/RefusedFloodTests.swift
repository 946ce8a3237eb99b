import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseTestSupport
import HTTPTypes
import Testing

/// A flood of forged ztokens over loopback HTTP, on both stores: a few decisions a minute stored
/// whole per address, the rest counted into one row, shown by the API and the console's explorer
/// (linked to the samples), and nothing lost on the way.
@Suite struct RefusedFloodTests {
    typealias Flow = DeviceRiskFlowTests

    static func forgedQuery(_ server: ServerFixture, _ app: Flow.AppCredentials, _ token: String, address: String) async throws -> String {
        let response = try await server.send(
            .post,
            "/v1/risk/query",
            headers: app.backend,
            body: #"{"ztoken":"\#(token)","eventId":3301,"accountId":"victim","clientIp":"\#(address)"}"#
        )
        #expect(response.status == .ok)
        return try response.decoded(Components.Schemas.RiskDecisionView.self).tokenState.rawValue
    }

    @Test(arguments: TestStoreKind.available)
    func aForgedFloodIsSampledCountedAndShown(kind: TestStoreKind) async throws {
        // A minute that cannot turn while the test runs (it moves only when told).
        let clock = FixedClock(Date(timeIntervalSince1970: (Date().timeIntervalSince1970 / 60).rounded(.down) * 60 + 1))
        try await withServer(kind, clock: clock) { server in
            let app = try await Flow.createApp(server)
            let device = try await Flow.startDevice(server, app)
            var forged = Array(try await Flow.ztoken(server, app, device: device))
            forged[30] = forged[30] == "A" ? "B" : "A"
            let token = String(forged)
            let flood = 240
            let states = try await withThrowingTaskGroup(of: String.self) { group in
                for number in 0..<flood {
                    group.addTask { try await Self.forgedQuery(server, app, token, address: number % 8 == 0 ? "2001:db8::7" : "203.0.113.7") }
                }
                return try await group.reduce(into: Set<String>()) { $0.insert($1) }
            }
            #expect(states == ["forged"])

            // Five decisions whole per address; the rest counted into one row per address.
            let stored = try await server.send(.get, "/v1/admin/risk/decisions?appKey=\(app.appKey)&limit=200")
                .decoded(Components.Schemas.RiskDecisionPage.self)
            #expect(stored.items.count == 2 * RefusedDecisionSampler.fullRowsPerKey)
            let counts = try await server.send(.get, "/v1/admin/risk/refused-counts?appKey=\(app.appKey)")
                .decoded(Components.Schemas.RefusedCountPage.self)
            let byAddress = Dictionary(uniqueKeysWithValues: counts.items.map { ($0.clientIp, $0.decisions) })
            #expect(byAddress == ["203.0.113.7": Int64(210 - 5), "2001:db8::7": Int64(30 - 5)])
            #expect(counts.items.allSatisfy { $0.tokenState == .forged && $0.firstAt <= $0.lastAt })
            #expect(try await Flow.metric(server, "gatehouse_store_decisions_written_behind") == Double(flood))
            #expect(try await Flow.metric(server, "gatehouse_store_decisions_lost") == 0)

            // Paging and filters; a bad address or cursor is a 400.
            let page = try await server.send(.get, "/v1/admin/risk/refused-counts?appKey=\(app.appKey)&limit=1")
                .decoded(Components.Schemas.RefusedCountPage.self)
            let cursor = try #require(page.nextCursor)
            let rest = try await server.send(.get, "/v1/admin/risk/refused-counts?appKey=\(app.appKey)&limit=1&cursor=\(cursor)")
                .decoded(Components.Schemas.RefusedCountPage.self)
            #expect(Set((page.items + rest.items).map(\.clientIp)) == ["203.0.113.7", "2001:db8::7"] && rest.nextCursor == nil)
            let one = try await server.send(.get, "/v1/admin/risk/refused-counts?address=2001:db8::7")
                .decoded(Components.Schemas.RefusedCountPage.self)
            #expect(one.items.map(\.decisions) == [25])
            #expect(try await server.send(.get, "/v1/admin/risk/refused-counts?address=nowhere").problem?.code == "invalid_ip_address")
            #expect(try await server.send(.get, "/v1/admin/risk/refused-counts?cursor=12_x").problem?.code == "invalid_parameter")
            #expect(try await server.send(.get, "/v1/admin/risk/refused-counts?appKey=\(app.appKey)", headers: app.backend).status == .unauthorized)

            // The explorer shows the counts, each linked to its minute's samples.
            let browser = try await ConsoleTests.signIn(server, token: server.adminToken)
            let explorer = try await server.send(.get, "/console/decisions?appKey=\(app.appKey)", headers: browser.headers)
            #expect(explorer.status == .ok && explorer.text.contains("id=\"refused-counts\"") && explorer.text.contains(">205<"))
            let link = try #require(Self.samplesLink(in: explorer.text, address: "203.0.113.7"))
            let samples = try await server.send(.get, link.replacingOccurrences(of: "&amp;", with: "&"), headers: browser.headers)
            #expect(samples.status == .ok && samples.text.components(separatedBy: "class=\"decision-reject\"").count - 1 == 5)
            // A filter counts do not carry shows none.
            let filtered = try await server.send(.get, "/console/decisions?appKey=\(app.appKey)&eventId=3301", headers: browser.headers)
            #expect(filtered.status == .ok && !filtered.text.contains("id=\"refused-counts\""))
        }
    }

    /// The explorer's link to the samples of `address`'s count.
    static func samplesLink(in html: String, address: String) -> String? {
        html.components(separatedBy: "<tr>").first { $0.contains("<td>\(address)</td>") && $0.contains("href=\"/console/decisions?") }
            .flatMap { row in
                guard let start = row.range(of: "href=\"") else { return nil }
                return String(row[start.upperBound...].prefix { $0 != "\"" })
            }
    }
}
