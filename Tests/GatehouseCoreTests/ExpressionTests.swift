import Foundation
import GatehouseCore
import Testing

/// The rule language: what parses, what the checker refuses and where, and how values come out,
/// including CEL's logic over errors. The corpus in tests/interop/cel_corpus.json holds more, and
/// cel-python answers it too (.ci/run).
struct ExpressionTests {
    static let facts: [String: ExpressionValue] = {
        let json = JSONValue.parse(
            Array(
                """
                {"token": {"state": "fresh", "age": "12s"}, "event": 3301, "account": "a-1", "client": {"address": "203.0.113.7"},
                 "device": {"known": true, "firstSeen": "2026-11-26T09:30:00Z", "signals": {"proxy": true}, "attestationFailed": false,
                            "appsDetected": []},
                 "velocity": {"deviceEventsLastMinute": 1, "deviceAccountsLastDay": 4, "accountDevicesLastDay": 1, "ipDevicesLastHour": 30,
                              "addressAttestationsLastHour": 0, "networkAttestationsLastHour": 0, "accountAttestationsLastDay": 0},
                 "lists": {"deny": false, "allow": false, "challenge": true}, "tags": ["network.ip_changed"], "score": 10,
                 "now": "2026-11-26T10:00:00Z"}
                """.utf8
            )
        )!
        var facts: [String: ExpressionValue] = [:]
        for (name, value) in json.object! {
            facts[name] = try! ExpressionValue.from(value, as: RuleVariables.environment.variables[name]!, in: RuleVariables.environment)
        }
        return facts
    }()

    static func evaluate(_ text: String) throws -> Result<ExpressionValue, EvaluationError> {
        let expression = try ExpressionParser.parse(text)
        _ = try ExpressionChecker.check(expression, in: RuleVariables.environment)
        return ExpressionEvaluator.evaluate(expression, facts: facts)
    }

    static func refusal(_ text: String) -> ExpressionRefusal? {
        do {
            _ = try ExpressionChecker.check(try ExpressionParser.parse(text), in: RuleVariables.environment)
            return nil
        } catch {
            return error
        }
    }

    @Test(arguments: [
        ("1 + 2 * 3", ExpressionValue.int(7)),
        ("-9223372036854775808", .int(.min)),
        ("7 % -3", .int(1)),
        ("\"a\\u00e9\" + 'b'", .string("aéb")),
        ("size(\"héllo\")", .int(5)),
        ("\"HeLLo\".lowerAscii()", .string("hello")),
        ("[1, 2, 3].exists_one(x, x > 2)", .bool(true)),
        ("{\"a\": 1}.a", .int(1)),
        ("has(device.firstSeen) && now - device.firstSeen < duration(\"1h\")", .bool(true)),
        ("velocity.deviceAccountsLastDay > 3 && lists.challenge", .bool(true)),
        ("cidr(\"203.0.113.0/24\").containsIP(client.address)", .bool(true)),
        ("\"proxy\" in device.signals && device.signals.proxy ? 30 : 0", .int(30)),
        ("timestamp(\"2026-11-26T10:20:30Z\").getDayOfWeek()", .int(4)),
        ("duration(\"1.5h\") == duration(\"90m\")", .bool(true)),
        ("false && 1 / 0 == 1", .bool(false)),
        ("1 / 0 == 1 || true", .bool(true)),
        ("[1, 0].exists(x, 10 / x == 10)", .bool(true)),
        ("\"a\" in [1, \"a\"]", .bool(true)),
    ])
    func evaluates(_ text: String, _ expected: ExpressionValue) throws {
        #expect(try Self.evaluate(text) == .success(expected))
    }

    @Test(arguments: [
        "1 / 0", "9223372036854775807 + 1", "-9223372036854775808 / -1", "int(1e19)", "[1][1]", "{\"a\": 1}.b", "device.platform",
        "duration(\"1x\")", "ip(\"10.0.0.256\")", "timestamp(\"9999-12-31T23:59:59Z\") + duration(\"1s\")", "dyn([1]) == dyn([\"a\"])",
        "(1 / 0 == 1) && true",
    ])
    func failsOnItsValues(_ text: String) throws {
        guard case .failure = try Self.evaluate(text) else {
            Issue.record("\(text) evaluated")
            return
        }
    }

    @Test(arguments: [
        ("1 +", ExpressionRefusal.Kind.syntax, "1:4"),
        ("1 + 1.0", .type, "1:3"),
        ("1 == 1.0", .type, "1:3"),
        ("\"abc\"[0]", .type, "1:6"),
        ("device.nosuch", .unknownVariable, "1:7"),
        ("\"a\".matches(\"a\")", .unknownFunction, "1:4"),
        ("1u", .syntax, "1:1"),
        ("true &&\n  nosuch", .unknownVariable, "2:3"),
        (String(repeating: "(", count: 600) + "1" + String(repeating: ")", count: 600), .limit, "1:33"),
        (String(repeating: "x", count: 2001), .limit, "1:1"),
    ])
    func refuses(_ text: String, _ kind: ExpressionRefusal.Kind, _ position: String) {
        let refusal = Self.refusal(text)
        #expect(refusal?.kind == kind)
        #expect(refusal?.position.description == position)
    }

    /// A long conjunction is one node (a rule of forty conditions is fine), while nesting is bounded.
    @Test func aLongConjunctionIsNotDeep() throws {
        let text = (0..<40).map { "event != \($0)" }.joined(separator: " && ")
        #expect(try Self.evaluate(text) == .success(.bool(true)))
    }

    /// Comprehensions nested three deep over a hundred elements would take a million steps: the cost
    /// bound ends them with an error.
    @Test func theCostBoundEndsNestedLoops() throws {
        let list = "[" + (0..<100).map(String.init).joined(separator: ",") + "]"
        let text = "\(list).all(a, \(list).all(b, \(list).all(c, a + b + c >= 0)))"
        guard case .failure(let error) = try Self.evaluate(text) else {
            Issue.record("evaluated")
            return
        }
        #expect(error.message.contains("cost"))
    }

    /// Joining long strings costs their length: twenty joins of 1,500 characters are past the bound.
    @Test func theCostCountsTheCharactersAnOperationWalks() throws {
        let text =
            "[" + (0..<20).map { _ in "1" }.joined(separator: ",") + "].all(x, \"" + String(repeating: "a", count: 1500) + "\" + \"b\" != \"\")"
        guard case .failure(let error) = try Self.evaluate(text) else {
            Issue.record("evaluated")
            return
        }
        #expect(error.message.contains("cost"))
        let short = "[1, 2].all(x, \"" + String(repeating: "a", count: 1500) + "\" + \"b\" != \"\")"
        #expect(try Self.evaluate(short) == .success(.bool(true)))
    }
}
