import Foundation
import GatehouseAPI
import GatehouseTestSupport
import HTTPTypes
import Testing

/// The fraud team's rules over loopback HTTP on both stores: refused with line:column where they
/// would not run, applied by the risk query in enforce, only recorded in monitor, removed, bounded.
@Suite struct PolicyRuleFlowTests {
    typealias Flow = DeviceRiskFlowTests

    @Test(arguments: TestStoreKind.available)
    func rulesAreCheckedAppliedMonitoredAndRemoved(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Flow.createApp(server)
            let rules = "/v1/admin/apps/\(app.appKey)/risk/policy-rules"

            let refused = try await server.send(.put, "\(rules)/bad", body: #"{"when":"event == 3301 &&\n  nosuch > 1","then":{"decide":"review"}}"#)
            #expect(refused.status == .badRequest && refused.problem?.code == "invalid_policy_rule")
            #expect(refused.problem?.detail?.hasPrefix("2:3: ") == true, "\(refused.problem?.detail ?? "")")
            for body in [
                #"{"when":"true","then":{"tag":"rule.x","weight":10,"decide":"review"}}"#, #"{"when":"true","then":{}}"#,
                #"{"when":"1 + 1","then":{"decide":"review"}}"#, #"{"when":"true","then":{"decide":"review"},"eventId":3399}"#,
            ] {
                let answer = try await server.send(.put, "\(rules)/bad", body: body)
                #expect(answer.status == .badRequest, "\(body): \(answer.status)")
            }
            #expect(try await server.send(.put, "\(rules)/Bad%20Name", body: #"{"when":"true","then":{"decide":"review"}}"#).status == .badRequest)

            let tag = try await server.send(
                .put,
                "\(rules)/new-device",
                body: #"{"when":"device.known && now - device.firstSeen < duration(\"1h\")","then":{"tag":"rule.new_device","weight":40}}"#
            )
            #expect(tag.status == .ok, "\(tag.json ?? [:])")
            let monitored = try await server.send(
                .put,
                "\(rules)/everything",
                body: #"{"when":"event == 3301","then":{"decide":"reject"},"mode":"monitor","eventId":3301}"#
            )
            #expect(monitored.status == .ok)
            let failing = try await server.send(.put, "\(rules)/absent", body: #"{"when":"device.osPatchLevel < 202401","then":{"decide":"reject"}}"#)
            #expect(failing.status == .ok)
            let listed = try await server.send(.get, rules).decoded(Components.Schemas.PolicyRules.self)
            #expect(listed.items.map(\.name) == ["absent", "everything", "new-device"])

            // Within the instance's copy of the policy: a change through this instance shows at once.
            let device = try await Flow.startDevice(server, app)
            let decision = try await Flow.query(server, app, try await Flow.ztoken(server, app, device: device))
            #expect(Flow.tags(decision) == ["rule.new_device"])
            #expect(decision.score == 40 && decision.decision == .review, "the monitored reject is not applied")
            let outcomes = Dictionary(uniqueKeysWithValues: (decision.rules ?? []).map { ($0.rule, $0) })
            #expect(outcomes["everything"]?.mode == .monitor && outcomes["everything"]?.error == nil)
            #expect(outcomes["absent"]?.error?.contains("osPatchLevel") == true)
            #expect(outcomes["new-device"]?.effect == "tag rule.new_device +40")
            let stored = try await server.send(.get, "/v1/risk/decisions/\(decision.decisionId)", headers: app.backend)
                .decoded(Components.Schemas.RiskDecisionView.self)
            #expect(stored.rules == decision.rules)
            // The console's decision page says what each rule did.
            let browser = try await ConsoleTests.signIn(server, token: server.adminToken)
            let page = try await server.send(.get, "/console/apps/\(app.appKey)/decisions/\(decision.decisionId)", headers: browser.headers).text
            #expect(page.contains("id=\"decision-rules\"") && page.contains("would have applied") && page.contains("failed: "))

            #expect(try await server.send(.delete, "\(rules)/new-device").status == .noContent)
            let missing = try await server.send(.delete, "\(rules)/new-device")
            #expect(missing.status == .notFound && missing.problem?.code == "policy_rule_not_found")
            let after = try await Flow.query(server, app, try await Flow.ztoken(server, app, device: device))
            #expect(after.decision == .pass && Flow.tags(after).isEmpty)

            let audit = try await server.send(.get, "/v1/admin/audit?appKey=\(app.appKey)").json?["items"] as? [[String: Any]] ?? []
            #expect(audit.compactMap { $0["action"] as? String }.filter { $0.hasPrefix("risk.rule.") }.count == 4)
        }
    }

    /// At most 200 rules an app: of two new rules sent at once for the 200th place, one is stored and
    /// the other refused; the 201st is refused, a replacement of an existing one is not.
    @Test(arguments: TestStoreKind.available)
    func anAppHasAtMostTwoHundredRules(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Flow.createApp(server)
            let rules = "/v1/admin/apps/\(app.appKey)/risk/policy-rules"
            for index in 0..<199 {
                let put = try await server.send(.put, "\(rules)/r\(index)", body: #"{"when":"score > \#(index)","then":{"decide":"review"}}"#)
                #expect(put.status == .ok)
            }
            async let first = server.send(.put, "\(rules)/last-a", body: #"{"when":"true","then":{"decide":"review"}}"#)
            async let second = server.send(.put, "\(rules)/last-b", body: #"{"when":"true","then":{"decide":"review"}}"#)
            let statuses = [try await first.status, try await second.status].map(\.code).sorted()
            #expect(statuses == [200, 409], "\(statuses)")
            let extra = try await server.send(.put, "\(rules)/r200", body: #"{"when":"true","then":{"decide":"review"}}"#)
            #expect(extra.status == .conflict && extra.problem?.code == "invalid_policy_rule")
            #expect(try await server.send(.put, "\(rules)/r7", body: #"{"when":"true","then":{"decide":"pass"}}"#).status == .ok)
        }
    }
}
