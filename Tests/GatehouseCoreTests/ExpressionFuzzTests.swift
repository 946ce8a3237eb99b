import GatehouseCore
import GatehouseTestSupport
import Testing

/// Random and mutated expressions: each parses (then checks and evaluates, or is refused by the
/// checker) or is refused with a position inside the text; none crashes or hangs.
struct ExpressionFuzzTests {
    static let rounds = 6000

    static let seeds = [
        "event == 3301 && has(device.firstSeen) && now - device.firstSeen < duration(\"1h\")",
        "velocity.ipDevicesLastHour > 20 ? 'review' : \"pass\"",
        "cidr(\"10.0.0.0/8\").containsIP(client.address) || tags.exists(t, t.startsWith(\"net\"))",
        "[1, 2.5, 'x', {\"k\": [true, null]}].size() + -0x1F % 3",
        "!(score >= 40) && account.lowerAscii().endsWith(r'\\n') && \"\\u00e9\\x41\\101\" in [\"a\"]",
    ]
    static let pieces = [
        "(", ")", "[", "]", "{", "}", ".", ",", ":", "?", "!", "-", "+", "*", "/", "%", "<", "<=", "==", "!=", "&&", "||", " in ", "\"",
        "'", "\\", "1", "0x", "9223372036854775808", "1.5e308", "true", "null", "has(", "size(", "event", "device", ".all(x,", "x", "\n",
        "//", "é", "\u{0}", "\u{FFFF}", "😀", "u", "b\"", "r'", "\"\"\"",
    ]

    @Test func randomAndMutatedExpressionsAreParsedOrRefusedWithAPosition() {
        var random = SeededGenerator(state: 0x6365_6c66)
        var outcomes = [0, 0, 0]
        for round in 0..<Self.rounds {
            let text = round % 2 == 0 ? Self.mutated(&random) : Self.random(&random)
            let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
            do {
                let expression = try ExpressionParser.parse(text)
                outcomes[0] += 1
                if (try? ExpressionChecker.check(expression, in: RuleVariables.environment)) != nil {
                    _ = ExpressionEvaluator.evaluate(expression, facts: ExpressionTests.facts)
                    outcomes[1] += 1
                }
            } catch {
                outcomes[2] += 1
                #expect(error.position.line >= 1 && error.position.line <= max(lines.count, 1), "\(text.debugDescription): \(error)")
                #expect(error.position.column >= 1, "\(text.debugDescription): \(error)")
            }
        }
        // Both kinds of input reach every stage: a fuzzer that only ever made syntax errors tests little.
        #expect(outcomes[0] > Self.rounds / 10 && outcomes[1] > Self.rounds / 50 && outcomes[2] > Self.rounds / 10, "\(outcomes)")
    }

    static func mutated(_ random: inout SeededGenerator) -> String {
        var scalars = Array(seeds[Int.random(in: 0..<seeds.count, using: &random)].unicodeScalars)
        for _ in 0..<Int.random(in: 1...4, using: &random) {
            let at = Int.random(in: 0...scalars.count, using: &random)
            switch Int.random(in: 0..<3, using: &random) {
            case 0 where at < scalars.count: scalars.remove(at: at)
            case 1: scalars.insert(contentsOf: pieces[Int.random(in: 0..<pieces.count, using: &random)].unicodeScalars, at: at)
            default:
                let end = min(scalars.count, at + Int.random(in: 0...6, using: &random))
                scalars.insert(contentsOf: scalars[at..<end], at: at)
            }
        }
        var text = String.UnicodeScalarView()
        text.append(contentsOf: scalars)
        return String(text)
    }

    static func random(_ random: inout SeededGenerator) -> String {
        (0..<Int.random(in: 1...30, using: &random)).map { _ in pieces[Int.random(in: 0..<pieces.count, using: &random)] }.joined()
    }
}
