import Foundation
import GatehouseAPI
import GatehouseTestSupport
import HTTPTypes
import Testing

/// An attester in `monitor` over loopback HTTP on both stores: the gate lets every request through
/// and says why (`X-Gatehouse-Attest-Verdict`), counts the verdicts on /metrics and in the console,
/// and refuses again once switched to `enforce`; every switch is audited.
@Suite struct AttesterMonitorFlowTests {
    typealias Flow = DeviceRiskFlowTests
    static let verdict = HTTPField.Name("X-Gatehouse-Attest-Verdict")!

    @Test(arguments: TestStoreKind.available)
    func aMonitoredAttesterLetsThroughAndSaysWhy(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Flow.createApp(server)
            let device = try await Flow.startDevice(server, app)
            let created = try await server.send(
                .post,
                "/v1/admin/apps/\(app.appKey)/attesters",
                body: #"{"attestId":"login-pow","pow":{"maxNumber":1000},"enforcement":"monitor","routes":[{"method":"*","pathPrefix":"/api/"}]}"#
            )
            #expect(created.status == .created, "\(created.text)")
            let payload = try AttestationFlowTests.solve(try await AttestationFlowTests.challenge(server, app, "login-pow", device))
            let redeemed = try await Flow.sdk(
                server,
                app,
                "/v1/attest/tokens",
                #"{"attestId":"login-pow","deviceId":"\#(device)","payload":"\#(payload)"}"#
            )
            let token = try redeemed.decoded(Components.Schemas.AttestTokenResponse.self).token

            func gate(_ extra: HTTPFields) async throws -> (status: HTTPResponse.Status, verdict: String?, device: String?) {
                var headers: HTTPFields = [
                    HTTPField.Name("X-Original-Method")!: "GET", HTTPField.Name("X-Original-URI")!: "/api/pay",
                    HTTPField.Name("X-Gatehouse-Authorization")!: app.backend[.authorization]!,
                ]
                headers.append(contentsOf: extra)
                let answer = try await server.send(.get, "/v1/gate/verify", headers: headers)
                return (answer.status, answer.headers[Self.verdict], answer.headers[HTTPField.Name("X-Gatehouse-Device-Id")!])
            }
            let tokenHeader = HTTPField.Name("EO-Attest-Token")!
            let missing = try await gate([:])
            #expect(missing.status == .noContent && missing.verdict == "missing")
            // A client that says its own verdict is not heard.
            #expect(try await gate([Self.verdict: "valid"]).verdict == "missing")
            #expect(try await gate([tokenHeader: token + "x"]).verdict == "invalid")
            let valid = try await gate([tokenHeader: token])
            #expect(valid.status == .noContent && valid.verdict == "valid" && valid.device != nil)

            let metrics = String(buffer: try await server.client.execute(uri: "/metrics", method: .get).body)
            let missingLine = metrics.split(separator: "\n").first {
                $0.hasPrefix("gatehouse_attest_verdicts_total") && $0.contains(#"verdict="missing""#) && $0.contains(#"enforcement="monitor""#)
                    && $0.contains(#"route="* /api/""#) && $0.contains(#"attester="login-pow""#)
            }
            #expect(missingLine?.hasSuffix(" 2") == true, "\(metrics.split(separator: "\n").filter { $0.contains("attest_verdicts") })")
            let browser = try await ConsoleTests.signIn(server, token: server.adminToken)
            let overview = try await server.send(.get, "/console/apps/\(app.appKey)/overview?window=1h", headers: browser.headers).text
            #expect(overview.contains("id=\"attester-verdicts\"") && overview.contains("login-pow"), "the overview counts the verdicts")

            let enforced = try await server.send(.patch, "/v1/admin/apps/\(app.appKey)/attesters/login-pow", body: #"{"enforcement":"enforce"}"#)
            #expect(enforced.status == .ok)
            #expect(try await gate([:]).status == .unauthorized)
            #expect(try await gate([tokenHeader: token]).verdict == "valid")
            let bad = try await server.send(.patch, "/v1/admin/apps/\(app.appKey)/attesters/login-pow", body: #"{"enforcement":"loose"}"#)
            #expect(bad.status == .badRequest)
            let audit =
                try await server.send(.get, "/v1/admin/audit?appKey=\(app.appKey)&action=attester.update").json?["items"] as? [[String: Any]] ?? []
            let switched = audit.first { entry in
                ((entry["before"] as? [String: Any])?["enforcement"] as? String) == "monitor"
                    && ((entry["after"] as? [String: Any])?["enforcement"] as? String) == "enforce"
            }
            #expect(switched != nil, "the switch is audited with the enforcement before and after")
        }
    }
}
