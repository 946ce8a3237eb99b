// DeviceRisk: rules operators write as expressions over a risk query's facts.
// Serves the fraud team's side of seed 002's risk decisions.

import ArgumentParser
import Foundation
import GatehouseCore

/// A rule's expression tried offline, with the same Core code the server runs: for an operator writing
/// one, and for `.ci/run`, which runs a corpus through it and through cel-python (tests/interop/
/// cel_oracle.py) and requires the same answers.
struct RulesCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rules",
        abstract: "The fraud team's policy rules: list, put and remove them; versions, restore, replay; check and evaluate an expression offline.",
        subcommands: [List.self, Put.self, Remove.self, Versions.self, Restore.self, Replay.self, Evaluate.self, Variables.self]
    )

    struct Evaluate: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Check and evaluate an expression over facts; without --expression, one JSON object a line on standard input.",
            discussion: """
                Each input line is {"expression": "...", "facts": {...}}; each output line is {"value": {"type", "value"}}, \
                {"refused": {"kind", "line", "column", "message"}} (the expression would not be saved), or {"error": "..."} (it \
                evaluates to CEL's error value on these facts).
                """
        )

        @Option(help: "The expression.") var expression: String?
        @Option(help: "The facts, a JSON object keyed by variable (see `gatehouse rules variables`).") var facts: String = "{}"

        func run() async throws {
            if let expression {
                print(Self.answer(expression: expression, facts: Array(facts.utf8)))
                return
            }
            while let line = readLine(strippingNewline: true) {
                guard !line.isEmpty else { continue }
                guard let request = JSONValue.parse(Array(line.utf8))?.object, let expression = request["expression"]?.string else {
                    print(Self.encoded(.object(["error": .string("each line is {\"expression\": \"...\", \"facts\": {...}}")])))
                    continue
                }
                let facts = request["facts"] ?? .object([:])
                print(Self.answer(expression: expression, facts: facts))
            }
        }

        static func answer(expression: String, facts text: [UInt8]) -> String {
            guard let facts = JSONValue.parse(text) else { return encoded(.object(["error": .string("the facts are not JSON")])) }
            return answer(expression: expression, facts: facts)
        }

        static func answer(expression text: String, facts json: JSONValue) -> String {
            let environment = RuleVariables.environment
            let expression: RuleExpression
            do throws(ExpressionRefusal) {
                expression = try ExpressionParser.parse(text)
                _ = try ExpressionChecker.check(expression, in: environment)
            } catch {
                return encoded(
                    .object([
                        "refused": .object([
                            "kind": .string(error.kind.rawValue), "line": .integer(Int64(error.position.line)),
                            "column": .integer(Int64(error.position.column)), "message": .string(error.message),
                        ])
                    ])
                )
            }
            var facts: [String: ExpressionValue] = [:]
            for (name, value) in json.object ?? [:] {
                guard let type = environment.variables[name] else { return encoded(.object(["error": .string("no variable named \(name)")])) }
                do throws(EvaluationError) {
                    facts[name] = try ExpressionValue.from(value, as: type, in: environment)
                } catch {
                    return encoded(.object(["error": .string("the fact \(name): \(error.message)")]))
                }
            }
            // As a rule runs on a query: its constant calls folded, compiled against the rules' layout.
            switch ExpressionEvaluator.evaluate(ExpressionFolding.fold(expression), facts: facts) {
            case .success(let value): return encoded(.object(["value": value.json]))
            case .failure(let error): return encoded(.object(["error": .string(error.message)]))
            }
        }

        static func encoded(_ json: JSONValue) -> String {
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
            return (try? encoder.encode(json)).map { String(decoding: $0, as: UTF8.self) } ?? "{\"error\":\"unencodable\"}"
        }
    }

    struct Variables: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "What a rule may name, with types, as JSON.")

        func run() async throws {
            let environment = RuleVariables.environment
            let objects = environment.objects.mapValues { fields in
                JSONValue.object(fields.mapValues { .object(["type": .string($0.type.description), "optional": .bool($0.optional)]) })
            }
            print(
                Evaluate.encoded(
                    .object(["variables": .object(environment.variables.mapValues { .string($0.description) }), "objects": .object(objects)])
                )
            )
        }
    }
}
