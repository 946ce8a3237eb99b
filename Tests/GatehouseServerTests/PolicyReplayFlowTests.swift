import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseStore
import GatehouseTestSupport
import HTTPTypes
import Testing

/// Policy versions and replays over loopback HTTP on both stores: each change publishes a version,
/// each decision names the one that judged it, an earlier one is restored in one call, and a replay
/// of the window with a proposed rule reports what it would change, measured against the labels.
@Suite struct PolicyReplayFlowTests {
    typealias Flow = DeviceRiskFlowTests

    static func replay(_ server: ServerFixture, _ path: String, body: String) async throws -> Components.Schemas.Replay {
        let started = try await server.send(.post, path, body: body)
        #expect(started.status == .accepted, "\(started.text)")
        let id = try started.decoded(Components.Schemas.Replay.self).replayId
        for _ in 0..<300 {
            let run = try await server.send(.get, "\(path)/\(id)").decoded(Components.Schemas.Replay.self)
            if run.status != .running { return run }
            try await Task.sleep(for: .milliseconds(100))
        }
        Issue.record("the replay did not finish in 30 s")
        return try await server.send(.get, "\(path)/\(id)").decoded(Components.Schemas.Replay.self)
    }

    @Test(arguments: TestStoreKind.available)
    func changesPublishVersionsThatRestoreAndReplay(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Flow.createApp(server)
            let risk = "/v1/admin/apps/\(app.appKey)/risk"
            #expect(try await server.send(.get, "\(risk)/policy-versions").decoded(Components.Schemas.PolicyVersionPage.self).items.isEmpty)
            let rule = #"{"when":"device.known","then":{"tag":"rule.known","weight":5}}"#
            #expect(try await server.send(.put, "\(risk)/policy-rules/known", body: rule).status == .ok)
            #expect(try await server.send(.post, "\(risk)/lists", body: #"{"list":"deny","type":"account","value":"mule-1"}"#).status == .created)
            #expect(try await server.send(.put, "\(risk)/rules", body: #"{"reviewAt":30}"#).status == .ok)
            let versions = try await server.send(.get, "\(risk)/policy-versions").decoded(Components.Schemas.PolicyVersionPage.self)
            #expect(versions.items.map(\.version) == [3, 2, 1])
            #expect(versions.items.map(\.change) == ["risk.rules", "risk.list.add", "risk.rule.create"])
            let paged = try await server.send(.get, "\(risk)/policy-versions?limit=2").decoded(Components.Schemas.PolicyVersionPage.self)
            #expect(paged.nextBefore == 2)

            let device = try await Flow.startDevice(server, app)
            var decisions: [Components.Schemas.RiskDecisionView] = []
            for account in ["10538532", "10538532", "mule-1"] {
                decisions.append(
                    try await Flow.query(server, app, try await Flow.ztoken(server, app, device: device, account: account), account: account)
                )
            }
            #expect(decisions.map(\.policyVersion) == [3, 3, 3])
            #expect(decisions.map(\.decision) == [.pass, .pass, .reject])
            let labelled = try await server.send(
                .post,
                "/v1/risk/decisions/\(decisions[0].decisionId)/labels",
                headers: app.backend,
                body: #"{"label":"fraud","kind":"account_takeover"}"#
            )
            #expect(labelled.status == .created)

            let restored = try await server.send(.post, "\(risk)/policy-versions/1/restore")
            #expect(restored.status == .ok, "\(restored.json ?? [:])")
            let four = try restored.decoded(Components.Schemas.PolicyVersion.self)
            #expect(four.version == 4 && four.change == "risk.policy.restore")
            #expect(
                four.document.lists.isEmpty && four.document.rules.additionalProperties.isEmpty && four.document.policyRules.map(\.name) == ["known"]
            )
            #expect(try await server.send(.get, "\(risk)/lists").decoded(Components.Schemas.RiskListEntries.self).items.isEmpty)
            let after = try await Flow.query(server, app, try await Flow.ztoken(server, app, device: device, account: "mule-1"), account: "mule-1")
            #expect(after.policyVersion == 4 && after.decision == .pass, "the deny list is gone with version 4")
            #expect(try await server.send(.post, "\(risk)/policy-versions/99/restore").problem?.code == "policy_version_not_found")

            let window = #""from":"2000-01-01T00:00:00Z","to":"2100-01-01T00:00:00Z""#
            let proposal =
                #"{\#(window),"policyRules":[{"name":"account-review","when":"account == '10538532'","then":{"decide":"review"}}]}"#
            let run = try await Self.replay(server, "\(risk)/replays", body: proposal)
            #expect(run.status == .completed && run.progress == 1 && run.total == 4 && run.version == nil, "\(run)")
            let report = try #require(run.report)
            // Two passes become reviews, and the mule's reject (by version 3's deny list) a pass.
            #expect(report.replayed == 4 && report.changed == 3 && report.withoutFacts == 0)
            let cell = report.matrix.first { $0.before == .pass && $0.after == .review }
            #expect(cell?.count == 2)
            let tally = report.rules.first { $0.rule == "account-review" }
            #expect(tally?.hits == 2 && tally?.fraudHits == 1 && tally?.precision == 1 && tally?.recall == 1)
            #expect(report.fraud == 1 && report.recallBefore == 0 && report.recallAfter == 1)
            let changes = try await server.send(.get, "\(risk)/replays/\(run.replayId)/changes?limit=1").decoded(
                Components.Schemas.ReplayChanges.self
            )
            #expect(changes.items.count == 1 && changes.items[0].decisionId == decisions[0].decisionId && changes.nextCursor != nil)
            #expect(changes.items[0].href == "/console/apps/\(app.appKey)/decisions/\(decisions[0].decisionId)")
            let rest = try await server.send(.get, "\(risk)/replays/\(run.replayId)/changes?cursor=\(changes.nextCursor ?? "")")
                .decoded(Components.Schemas.ReplayChanges.self)
            #expect(rest.items.map(\.decisionId) == [decisions[1].decisionId, decisions[2].decisionId])

            // Version 3 as it was: the deny list rejects mule-1's first query, not version 4's.
            let three = try await Self.replay(server, "\(risk)/replays", body: #"{\#(window),"version":3}"#)
            #expect(three.version == 3 && three.report?.changed == 1)
            let listed = try await server.send(.get, "\(risk)/replays").decoded(Components.Schemas.ReplayPage.self)
            #expect(listed.items.map(\.replayId) == [three.replayId, run.replayId])

            // One running replay (as another instance would have it) refuses a second start with 409.
            try await StoreService.withStore(server.store.location, logger: TestDatabase.logger) { store in
                let stored = try #require(try await store.apps.app(withKey: try AppKey(validating: app.appKey)))
                let now = Date()
                let running = ReplayRun(
                    id: UUID(),
                    appID: stored.id,
                    status: .running,
                    requestedBy: "cli:test",
                    proposedVersion: nil,
                    document: .empty,
                    from: now,
                    to: now,
                    total: 0,
                    processed: 0,
                    report: nil,
                    error: nil,
                    startedAt: now,
                    updatedAt: now,
                    finishedAt: nil
                )
                let audit = ChangeOrigin(actor: Actor(kind: .cli, name: "test"), requestID: nil, sourceAddress: nil)
                    .entry(at: now, action: "risk.replay.start", targetType: "replay", targetID: "x", appID: stored.id, before: nil, after: nil)
                try await store.deviceRisk.startReplay(running, audit: audit)
            }
            let second = try await server.send(.post, "\(risk)/replays", body: #"{\#(window)}"#)
            #expect(second.status == .conflict && second.problem?.code == "replay_running")

            let finished = try await server.send(.post, "\(risk)/replays/\(run.replayId)/cancel")
            #expect(finished.status == .conflict)
            #expect(try await server.send(.get, "\(risk)/replays/not-a-uuid").problem?.code == "replay_not_found")
            let refusals: [(String, String)] = [
                (#"{"from":"2100-01-01T00:00:00Z","to":"2000-01-01T00:00:00Z"}"#, "invalid_replay"),
                (#"{\#(window),"version":99}"#, "policy_version_not_found"),
                (#"{\#(window),"rules":{"9999":{"reviewAt":10}}}"#, "invalid_replay"),
                (#"{\#(window),"rules":{"app":{"reviewAt":0}}}"#, "invalid_risk_rules"),
                (#"{\#(window),"policyRules":[{"name":"x","when":"nosuch > 1","then":{"decide":"review"}}]}"#, "invalid_policy_rule"),
            ]
            for (body, code) in refusals {
                let refused = try await server.send(.post, "\(risk)/replays", body: body)
                #expect(refused.status.code / 100 == 4 && refused.problem?.code == code, "\(body): \(refused.status) \(refused.problem?.code ?? "")")
            }
            let audit = try await server.send(.get, "/v1/admin/audit?appKey=\(app.appKey)&limit=100").json?["items"] as? [[String: Any]] ?? []
            let actions = audit.compactMap { $0["action"] as? String }
            #expect(
                actions.contains("risk.policy.restore") && actions.filter { $0 == "risk.replay.start" }.count == 3,
                "two started here, one by the test's store"
            )
        }
    }

    /// The console: the editor shows a refused expression's error in place and keeps what was written,
    /// publishes, switches a rule's mode, restores a version; a replay started from its form completes
    /// and its page shows the matrix and the changed decisions.
    @Test(arguments: TestStoreKind.available)
    func theConsoleEditsPublishesRestoresAndReplays(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Flow.createApp(server)
            let device = try await Flow.startDevice(server, app)
            let decision = try await Flow.query(server, app, try await Flow.ztoken(server, app, device: device))
            let browser = try await ConsoleTests.signIn(server, token: server.adminToken)
            let policy = "/console/apps/\(app.appKey)/policy"
            #expect(try await server.send(.get, policy, headers: browser.headers).text.contains("No policy rule"))

            func post(_ path: String, _ fields: String) async throws -> TestResponse {
                try await server.send(.post, path, headers: browser.form(fields), body: fields + "&csrf=\(browser.csrf)")
            }
            let refused = try await post("\(policy)/rules", "name=known&when=device.known+%26%26%0D%0A++nosuch&decide=review&mode=monitor")
            #expect(refused.status == .badRequest)
            #expect(
                refused.text.contains("id=\"rule-error\"") && refused.text.contains("2:3: ") && refused.text.contains("  nosuch\n  ^"),
                "\(refused.text)"
            )
            #expect(refused.text.contains(">device.known &amp;&amp;\r\n  nosuch</textarea>"), "what was written is kept, as the browser sent it")
            #expect(try await post("\(policy)/rules", "name=known&when=device.known&decide=review&mode=monitor").status == .seeOther)
            var page = try await server.send(.get, policy, headers: browser.headers).text
            #expect(page.contains("mode-monitor\">monitor") && page.contains("Switch to enforce"))
            #expect(try await post("\(policy)/rules/known/mode", "").status == .seeOther)
            page = try await server.send(.get, policy, headers: browser.headers).text
            #expect(page.contains("mode-enforce\">enforce") && page.contains("data-version=\"2\""))
            #expect(try await post("\(policy)/versions/1/restore", "").status == .seeOther)
            page = try await server.send(.get, policy, headers: browser.headers).text
            #expect(page.contains("3 (live)") && page.contains("mode-monitor\">monitor"), "version 1 had the rule in monitor")

            let replays = "/console/apps/\(app.appKey)/replays"
            let form = "from=2000-01-01T00:00:00Z&to=2100-01-01T00:00:00Z&version=&name=everything&when=true&decide=reject&mode=enforce"
            let started = try await post(replays, form)
            #expect(started.status == .seeOther)
            let location = try #require(started.headers[.location])
            var shown = ""
            for _ in 0..<100 {
                shown = try await server.send(.get, location, headers: browser.headers).text
                if !shown.contains("http-equiv=\"refresh\"") { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(shown.contains("id=\"replay-status\">completed") && shown.contains("id=\"replay-chart\""))
            #expect(shown.contains("id=\"replay-changed\">1<") && shown.contains(decision.decisionId))
            #expect(try await server.send(.get, replays, headers: browser.headers).text.contains("completed"))
            let backwards = try await post(replays, "from=2100-01-01T00:00:00Z&to=2000-01-01T00:00:00Z")
            #expect(backwards.status == .badRequest)
        }
    }

    /// A shadow policy judges every query beside the live one: the live answer is returned, the
    /// shadow's outcome stored; stopping it stops that; both are audited.
    @Test(arguments: TestStoreKind.available)
    func aShadowPolicyIsJudgedAndNeverAnswered(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Flow.createApp(server)
            let shadow = "/v1/admin/apps/\(app.appKey)/risk/shadow"
            #expect(try await server.send(.get, shadow).decoded(Components.Schemas.ShadowPolicyState.self).running == false)
            let started = try await server.send(.put, shadow, body: #"{"policyRules":[{"name":"all","when":"true","then":{"decide":"reject"}}]}"#)
            #expect(started.status == .ok, "\(started.text)")
            #expect(try started.decoded(Components.Schemas.ShadowPolicy.self).document.policyRules.map(\.name) == ["all"])
            let refused = try await server.send(.put, shadow, body: #"{"policyRules":[{"name":"x","when":"nosuch","then":{"decide":"reject"}}]}"#)
            #expect(refused.status == .badRequest && refused.problem?.code == "invalid_policy_rule")
            let device = try await Flow.startDevice(server, app)
            let judged = try await Flow.query(server, app, try await Flow.ztoken(server, app, device: device))
            #expect(judged.decision == .pass && judged.shadow?.decision == .reject && judged.shadow?.score == 0)
            let stored = try await server.send(.get, "/v1/risk/decisions/\(judged.decisionId)", headers: app.backend)
                .decoded(Components.Schemas.RiskDecisionView.self)
            #expect(stored.shadow == judged.shadow)
            let browser = try await ConsoleTests.signIn(server, token: server.adminToken)
            // The decision's counters reach the overview with its write behind the answer: asked until they
            // have (under load, a moment after the decision reads back), a bounded number of times.
            var overview = ""
            for _ in 0..<50 {
                overview = try await server.send(.get, "/console/apps/\(app.appKey)/overview?window=1h", headers: browser.headers).text
                if overview.contains("id=\"shadow-outcomes\"") { break }
                try await Task.sleep(for: .milliseconds(100))
            }
            #expect(overview.contains("id=\"shadow-outcomes\""))

            #expect(try await server.send(.delete, shadow).status == .noContent)
            #expect(try await server.send(.delete, shadow).status == .noContent, "stopping what is stopped is no error")
            #expect(try await server.send(.get, shadow).decoded(Components.Schemas.ShadowPolicyState.self).policy == nil)
            let after = try await Flow.query(server, app, try await Flow.ztoken(server, app, device: device))
            #expect(after.shadow == nil)
            let audit = try await server.send(.get, "/v1/admin/audit?appKey=\(app.appKey)").json?["items"] as? [[String: Any]] ?? []
            let actions = audit.compactMap { $0["action"] as? String }
            #expect(actions.contains("risk.shadow.start") && actions.contains("risk.shadow.stop"))
        }
    }
}
