import Foundation
import GatehouseCore
import Testing

/// The fraud team's rules over the built-in verdict: validated as they will run, applied in enforce,
/// only recorded in monitor, a failing rule applying nothing, and the order of decisions.
struct PolicyRuleTests {
    let thresholds = RiskRules.effective(app: nil, event: nil)

    func rule(_ name: String, _ when: String, _ then: PolicyRule.Effect, _ mode: PolicyRule.Mode = .enforce) throws -> CompiledRule {
        try PolicyRule.validated(name: name, when: when, then: then, mode: mode, eventID: nil)
    }

    func apply(_ rules: [CompiledRule], to builtIn: RiskVerdict = RiskVerdict(decision: .pass, score: 10, tags: [])) -> RiskVerdict {
        RiskEngine.apply(CompiledRuleSet(rules), to: builtIn, facts: ExpressionTests.facts, thresholds: thresholds)
    }

    @Test func anEnforcedTagAddsItsWeightAndAMonitoredOneOnlyItsOutcome() throws {
        let enforced = try rule("new-device", "now - device.firstSeen < duration(\"1h\")", .tag("rule.new_device", weight: 40))
        let monitored = try rule("busy-address", "velocity.ipDevicesLastHour > 20", .tag("rule.busy_address", weight: 50), .monitor)
        let verdict = apply([enforced, monitored])
        #expect(verdict.tags.map(\.tag) == ["rule.new_device"])
        #expect(verdict.score == 40 && verdict.decision == .review)
        #expect(verdict.rules.map(\.rule) == ["new-device", "busy-address"])
        #expect(verdict.rules.allSatisfy { $0.error == nil })
        #expect(verdict.rules.last?.mode == .monitor && verdict.rules.last?.effect == "tag rule.busy_address +50")
    }

    @Test func decisionsGoInTheirOrder() throws {
        let pass = try rule("trusted", "true", .decide(.pass))
        let review = try rule("look", "true", .decide(.review))
        let reject = try rule("stop", "true", .decide(.reject))
        #expect(apply([pass]).decision == .pass)
        #expect(apply([pass, review]).decision == .review)
        #expect(apply([review, reject, pass]).decision == .reject)
        // A bad token rejects whatever a rule says.
        let forged = RiskVerdict(decision: .reject, score: 100, tags: [TagHit(tag: "token.forged", reason: "x", weight: 100)])
        #expect(apply([pass], to: forged).decision == .reject)
        // A rule that does not hold leaves nothing.
        let never = try rule("never", "false", .decide(.reject))
        #expect(apply([never]).rules.isEmpty && apply([never]).decision == .pass)
    }

    @Test func aFailingRuleAppliesNothingAndSaysWhy() throws {
        let failing = try rule("absent-fact", "device.platform == \"ios\"", .decide(.reject))
        let verdict = apply([failing])
        #expect(verdict.decision == .pass)
        #expect(verdict.rules.first?.error?.contains("platform") == true)
    }

    @Test(arguments: [
        ("Bad Name", "true", PolicyRule.Effect.decide(.review), "name"),
        ("ok", "true", .tag("new_device", weight: 10), "then.tag"),
        ("ok", "true", .tag("rule.x", weight: 101), "then.weight"),
        ("ok", "1 + 1", .decide(.review), "when"),
        ("ok", "device.nosuch", .decide(.review), "when"),
    ])
    func refusesWhatWouldNotRun(_ name: String, _ when: String, _ then: PolicyRule.Effect, _ field: String) {
        #expect(throws: DomainError.self) { _ = try PolicyRule.validated(name: name, when: when, then: then, mode: .enforce, eventID: nil) }
        do {
            _ = try PolicyRule.validated(name: name, when: when, then: then, mode: .enforce, eventID: nil)
        } catch {
            #expect(error.field == field && error.code == .invalidPolicyRule)
        }
    }

    @Test func aRefusedExpressionNamesWhere() {
        do {
            _ = try PolicyRule.validated(name: "x", when: "event == 3301 &&\n  nosuch > 1", then: .decide(.review), mode: .enforce, eventID: nil)
            Issue.record("accepted")
        } catch {
            #expect(error.detail.hasPrefix("2:3: "))
        }
    }

    /// The facts a query gives its rules: the device's, the velocity counts, the built-in tags and score.
    @Test func aQueryGivesItsRulesItsFacts() throws {
        let appID = AppID(UUID())
        let device = Device(
            appID: appID,
            id: DeviceID(bytes: Array(repeating: 2, count: 16)),
            clientDeviceID: "d",
            mode: [],
            platform: .android,
            sdkVersion: nil,
            basic: nil,
            unique: nil,
            extra: nil,
            environment: [.proxy],
            firstSeen: Date(timeIntervalSince1970: 1_800_000_000),
            lastSeen: Date(timeIntervalSince1970: 1_800_000_000),
            lastAddress: "198.51.100.1"
        )
        let query = RiskQuery(
            appID: appID,
            eventID: try EventID(validating: 3301),
            accountID: try AccountID(validating: "a"),
            clientAddress: IPAddress("203.0.113.9")!,
            tokenState: .fresh,
            claims: nil,
            at: Date(timeIntervalSince1970: 1_800_000_600)
        )
        let builtIn = RiskVerdict(decision: .pass, score: 15, tags: [TagHit(tag: "device.proxy", reason: "r", weight: 15)])
        let judged = JudgedQuery(query, state: .fresh, device: device, velocity: nil, hardwareRequired: false)
        let facts = RuleFacts.values(judged, listHits: [], verdict: builtIn)
        let expression = try ExpressionParser.parse(
            "device.platform == 'android' && device.signals.proxy && now - device.firstSeen == duration('10m') && 'device.proxy' in tags && score == 15 && device.startedFrom != client.address"
        )
        _ = try ExpressionChecker.check(expression, in: RuleVariables.environment)
        #expect(ExpressionEvaluator.evaluate(expression, facts: facts) == .success(.bool(true)))
    }

    /// Calls worked out when a rule is compiled give what they give at evaluation, a failing one
    /// included (it is left to fail there), and the folded tree holds no call of them.
    @Test(arguments: [
        #"cidr("10.0.0.0/8").containsIP(client.address)"#, #"cidr("bad").containsIP(client.address)"#,
        #"ip("203.0.113.9") == ip(client.address)"#, #"[cidr("203.0.113.0/24"), cidr("2001:db8::/32")].exists(n, n.containsIP(client.address))"#,
        #"now - timestamp("2026-01-01T00:00:00Z") > duration("1h")"#, #"duration("nonsense") > duration("1s")"#,
        #"has(token.age) && token.age < duration("5m")"#, #"size(cidr("10.0.0.0/8").ip().string()) > 0 || true"#,
    ])
    func foldingChangesNoValue(text: String) throws {
        let facts = RuleFacts.values(
            JudgedQuery(
                appID: AppID(UUID()),
                eventID: try EventID(validating: 3301),
                accountID: try AccountID(validating: "a"),
                deviceID: nil,
                clientAddress: IPAddress("203.0.113.9")!,
                userAgent: nil,
                at: Date(timeIntervalSince1970: 1_800_000_000),
                state: .fresh,
                facts: DecisionFacts(tokenAge: 30, device: nil, velocity: nil, hardwareRequired: false)
            ),
            listHits: [],
            verdict: RiskVerdict(decision: .pass, score: 0, tags: [])
        )
        let expression = try ExpressionParser.parse(text)
        let folded = ExpressionFolding.fold(expression)
        let unfolded = ExpressionEvaluator.evaluate(expression, facts: facts)
        let answer = ExpressionEvaluator.evaluate(folded, facts: facts)
        switch (unfolded, answer) {
        case (.success(let a), .success(let b)): #expect(a == b, "\(text)")
        case (.failure(let a), .failure(let b)): #expect(a.message == b.message, "\(text)")
        default: Issue.record("\(text): \(unfolded) folded into \(answer)")
        }
        let printed = "\(folded)"
        #expect("\(expression)".contains("function: \"") && !"\(expression)".contains("constant("), "the tree prints its calls")
        if !text.contains("bad") && !text.contains("nonsense") {
            #expect(
                !printed.contains("function: \"cidr\"") && !printed.contains("function: \"duration\"") && printed.contains("constant("),
                "\(folded)"
            )
        }
    }

    /// One query's rules share the address they parsed (`FactValues`): a rule that parses another
    /// text, or fails to parse one, never gets an earlier rule's address.
    @Test func rulesShareAParsedAddressOnlyForTheSameText() throws {
        let facts = RuleVariables.layout.values(
            ExpressionTests.facts.merging(["client": .object("Client", ["address": .string("203.0.113.7")])]) { $1 }
        )
        var values = facts
        let answers = try [
            #"cidr("203.0.113.0/24").containsIP(client.address)"#, #"cidr("203.0.113.0/24").containsIP("198.51.100.1")"#,
            #"ip(client.address) == ip("203.0.113.7")"#, #"cidr("0.0.0.0/0").containsIP("203.0.113.7 ")"#,
            #"ip("198.51.100.1").family() == 4 && cidr("203.0.113.7/32").containsIP(client.address)"#,
        ].map { text in
            let rule = try PolicyRule.validated(name: "r", when: text, then: .decide(.review), mode: .enforce, eventID: nil)
            return rule.program.evaluate(&values).map { $0 == .bool(true) }
        }
        #expect(answers.map { try? $0.get() } == [true, false, true, nil, true])
        if case .failure(let error) = answers[3] { #expect(error.message.contains("not valid")) } else { Issue.record("\(answers[3])") }
    }
}
