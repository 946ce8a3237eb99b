import Foundation
import GatehouseAPI
import GatehouseTestSupport
import HTTPTypes
import Testing

/// Labels over loopback HTTP on both stores: the app's backend and operators label a decision, the
/// last label stands, each is audited, another app's decision is not found, a flood is bounded.
@Suite struct DecisionLabelFlowTests {
    typealias Flow = DeviceRiskFlowTests

    @Test(arguments: TestStoreKind.available)
    func backendAndOperatorsLabelDecisions(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Flow.createApp(server)
            let other = try await Flow.createApp(server)
            let device = try await Flow.startDevice(server, app)
            let decision = try await Flow.query(server, app, try await Flow.ztoken(server, app, device: device))
            let labels = "/v1/risk/decisions/\(decision.decisionId)/labels"

            let labelled = try await server.send(
                .post,
                labels,
                headers: app.backend,
                body: #"{"label":"fraud","kind":"chargeback","note":"disputed on 2026-11-20"}"#
            )
            #expect(labelled.status == .created, "\(labelled.json ?? [:])")
            let view = try labelled.decoded(Components.Schemas.RiskDecisionView.self)
            #expect(view.label?.label == .fraud && view.label?.kind == .chargeback && view.label?.labelledBy == "app-server:\(app.appKey)")

            // Another app's credential does not reach this app's decision, nor does a malformed id.
            let foreign = try await server.send(.post, labels, headers: other.backend, body: #"{"label":"fraud","kind":"other"}"#)
            #expect(foreign.status == .notFound && foreign.problem?.code == "decision_not_found")
            let malformed = try await server.send(
                .post,
                "/v1/risk/decisions/not-a-uuid/labels",
                headers: app.backend,
                body: #"{"label":"fraud","kind":"other"}"#
            )
            #expect(malformed.status == .notFound)
            for body in [
                #"{"label":"suspicious","kind":"other"}"#, #"{"label":"fraud","kind":"theft"}"#, #"{"label":"fraud"}"#,
                #"{"label":"fraud","kind":"other","note":"\#(String(repeating: "x", count: 501))"}"#,
                #"{"label":"fraud","kind":"other","note":"bell\u0007"}"#, #"{"label":"fraud","kind":"other","extra":1}"#,
            ] {
                let refused = try await server.send(.post, labels, headers: app.backend, body: body)
                #expect(refused.status == .badRequest, "\(body): \(refused.status)")
            }

            // An operator's label replaces the backend's; the explorer filters by the last one.
            let relabelled = try await server.send(
                .post,
                "/v1/admin/apps/\(app.appKey)/risk/decisions/\(decision.decisionId)/labels",
                body: #"{"label":"legitimate","kind":"other","note":"the customer confirmed"}"#
            )
            #expect(relabelled.status == .created)
            let stored = try await server.send(.get, "/v1/risk/decisions/\(decision.decisionId)", headers: app.backend)
                .decoded(Components.Schemas.RiskDecisionView.self)
            #expect(stored.label?.label == .legitimate && stored.label?.labelledBy.hasPrefix("admin-token:") == true)
            let legitimate = try await server.send(.get, "/v1/admin/risk/decisions?appKey=\(app.appKey)&label=legitimate")
                .decoded(Components.Schemas.RiskDecisionPage.self)
            #expect(legitimate.items.map(\.decisionId) == [decision.decisionId])
            let fraud = try await server.send(.get, "/v1/admin/risk/decisions?appKey=\(app.appKey)&label=fraud")
                .decoded(Components.Schemas.RiskDecisionPage.self)
            #expect(fraud.items.isEmpty)
            #expect(try await server.send(.get, "/v1/admin/risk/decisions?label=maybe").status == .badRequest)

            let audit = try await server.send(.get, "/v1/admin/audit?appKey=\(app.appKey)").json?["items"] as? [[String: Any]] ?? []
            let entries = audit.filter { $0["action"] as? String == "risk.decision.label" }
            #expect(entries.count == 2)
            #expect(entries.contains { $0["actor"] as? String == "app-server:\(app.appKey)" })
        }
    }

    /// The console: label buttons on the decision page, the explorer's label filter, and the overview's
    /// labelled fraud that was passed.
    @Test(arguments: TestStoreKind.available)
    func theConsoleLabelsAndCountsLabelledDecisions(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Flow.createApp(server)
            let device = try await Flow.startDevice(server, app)
            let decision = try await Flow.query(server, app, try await Flow.ztoken(server, app, device: device))
            #expect(decision.decision == .pass)
            let browser = try await ConsoleTests.signIn(server, token: server.adminToken)
            let page = "/console/apps/\(app.appKey)/decisions/\(decision.decisionId)"
            #expect(try await server.send(.get, page, headers: browser.headers).text.contains("Not labelled"))
            let fields = "label=fraud&kind=promotion_abuse&note=coupon+farm"
            let posted = try await server.send(.post, "\(page)/labels", headers: browser.form(fields), body: fields + "&csrf=\(browser.csrf)")
            #expect(posted.status == .seeOther)
            let shown = try await server.send(.get, page, headers: browser.headers).text
            #expect(shown.contains("label-fraud\">fraud</strong> (promotion_abuse)") && shown.contains("coupon farm"))
            let bad = "label=fraud&kind=nonsense"
            #expect(
                try await server.send(.post, "\(page)/labels", headers: browser.form(bad), body: bad + "&csrf=\(browser.csrf)").status == .badRequest
            )

            let explorer = try await server.send(.get, "/console/decisions?appKey=\(app.appKey)&label=fraud", headers: browser.headers).text
            #expect(explorer.contains(decision.decisionId) && explorer.contains("label-fraud"))
            let overview = try await server.send(.get, "/console/apps/\(app.appKey)/overview", headers: browser.headers).text
            #expect(overview.contains("id=\"fraud-passed\">1</a> of 1 fraud"), "\(overview)")
        }
    }

    /// A decision takes at most 20 labels: a backend labelling in a loop gets 409 past them, and its
    /// audit entries stop there. A refused token's decision, written behind its answer, is labelled too.
    @Test(arguments: TestStoreKind.available)
    func aLabelFloodIsBounded(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Flow.createApp(server)
            let forged = try await server.send(
                .post,
                "/v1/risk/query",
                headers: app.backend,
                body: #"{"ztoken":"forged","eventId":3301,"accountId":"10538532","clientIp":"127.0.0.1"}"#
            )
            let decision = try forged.decoded(Components.Schemas.RiskDecisionView.self)
            let labels = "/v1/risk/decisions/\(decision.decisionId)/labels"
            var statuses: [HTTPResponse.Status] = []
            for index in 0..<22 {
                let kind = index.isMultiple(of: 2) ? "fraud" : "legitimate"
                statuses.append(try await server.send(.post, labels, headers: app.backend, body: #"{"label":"\#(kind)","kind":"other"}"#).status)
            }
            #expect(statuses.prefix(20).allSatisfy { $0 == .created })
            let refused = try await server.send(.post, labels, headers: app.backend, body: #"{"label":"fraud","kind":"other"}"#)
            #expect(statuses.suffix(2).allSatisfy { $0 == .conflict } && refused.problem?.code == "label_limit")
            let stored = try await server.send(.get, "/v1/risk/decisions/\(decision.decisionId)", headers: app.backend)
                .decoded(Components.Schemas.RiskDecisionView.self)
            #expect(stored.label?.label == .legitimate, "the twentieth label stands")
            let audit = try await server.send(.get, "/v1/admin/audit?appKey=\(app.appKey)&limit=100").json?["items"] as? [[String: Any]] ?? []
            #expect(audit.filter { $0["action"] as? String == "risk.decision.label" }.count == 20)
        }
    }
}
