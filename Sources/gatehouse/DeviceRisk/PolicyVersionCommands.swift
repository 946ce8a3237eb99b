import ArgumentParser
import Foundation
import GatehouseCore
import GatehouseOperations

/// Policy versions and replays at the host, through the same operations as the admin API.
func withPolicyVersionOperations<T: Sendable>(
    _ common: CommonOptions,
    _ body: @Sendable (PolicyVersionOperations, ReplayOperations, ChangeOrigin) async throws -> T
) async throws -> T {
    try await withOperatorStore(common) { store, configuration, origin in
        let box = try configuration.loadSecretBox().box
        try await prepareStore(store, box: box, migrate: false, logger: .init(label: "gatehouse"))
        let clock = SystemClock()
        let apps = AppOperations(store: store, box: box, clock: clock)
        let versions = PolicyVersionOperations(store: store.deviceRisk, apps: apps, clock: clock)
        return try await body(versions, ReplayOperations(store: store.deviceRisk, apps: apps, clock: clock), origin)
    }
}

extension RulesCommand {
    struct Versions: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List an app's published policy versions, newest first, one a line.")
        @Argument(help: "The appKey.") var appKey: String
        @Option(help: "How many, 1 to 200.") var limit: Int = 50
        @OptionGroup var common: CommonOptions

        func run() async throws {
            let versions = try await withPolicyVersionOperations(common) { [appKey, limit] operations, _, _ in
                try await operations.versions(try AppKey(validating: appKey), before: nil, limit: limit)
            }
            for version in versions {
                let counts = "\(version.document.policyRules.count) rules, \(version.document.lists.count) list entries"
                print("\(version.number)\t\(version.publishedAt.ISO8601Format())\t\(version.publishedBy)\t\(version.change)\t\(counts)")
            }
        }
    }

    struct Restore: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Make an earlier policy version the app's policy again (published as the newest).")
        @Argument(help: "The appKey.") var appKey: String
        @Argument(help: "The version to restore.") var version: Int
        @OptionGroup var common: CommonOptions

        func run() async throws {
            let restored = try await withPolicyVersionOperations(common) { [appKey, version] operations, _, origin in
                try await operations.restore(try AppKey(validating: appKey), number: version, origin: origin)
            }
            print("version \(version) restored as version \(restored.number)")
        }
    }

    struct Replay: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Replay an app's stored decisions over a window with a version or proposed policy rules, and print the report.",
            discussion: """
                Runs here, to the end, as the admin API's replay does in the server (one at a time an app; at most 2,000,000 \
                decisions). --policy-rules is a JSON array of {"name", "when", "then": {"tag", "weight"} or {"decide"}, "mode", \
                "eventId"}, put in place of the version's policy rules.
                """
        )
        @Argument(help: "The appKey.") var appKey: String
        @Option(help: "The window's start, RFC 3339.") var from: String
        @Option(help: "The window's end (excluded), RFC 3339.") var to: String
        @Option(help: "The version to start from; the newest when absent.") var version: Int?
        @Option(name: .customLong("policy-rules"), help: "Proposed policy rules, a JSON array.") var policyRules: String?
        @OptionGroup var common: CommonOptions

        func run() async throws {
            guard let start = RFC3339.parse(from), let end = RFC3339.parse(to) else { throw ValidationError("--from and --to are RFC 3339 times.") }
            let proposed = try policyRules.map(Self.rules)
            let request = ReplayOperations.Request(from: start, to: end, version: version, policyRules: proposed)
            let run = try await withPolicyVersionOperations(common) { [appKey] _, replays, origin in
                let started = try await replays.start(try AppKey(validating: appKey), request, origin: origin)
                await replays.run(started)
                return try await replays.replay(try AppKey(validating: appKey), id: started.id.uuidString)
            }
            print(Self.text(run))
            if run.status != .completed { throw ExitCode.failure }
        }

        static func rules(_ text: String) throws -> [PolicyRule] {
            guard case .array(let items)? = JSONValue.parse(Array(text.utf8)) else { throw ValidationError("--policy-rules is a JSON array.") }
            return try items.map { item in
                guard let rule = item.object, let name = rule["name"]?.string, let when = rule["when"]?.string, let then = rule["then"]?.object else {
                    throw ValidationError("Each proposed rule has a name, when and then.")
                }
                let effect: PolicyRule.Effect
                if let tag = then["tag"]?.string, let weight = then["weight"]?.integer {
                    effect = .tag(tag, weight: Int(weight))
                } else if let decision = then["decide"]?.string.flatMap(RiskDecision.init(rawValue:)) {
                    effect = .decide(decision)
                } else {
                    throw ValidationError("A rule's then is {\"tag\", \"weight\"} or {\"decide\": pass|review|reject}.")
                }
                let mode = PolicyRule.Mode(rawValue: rule["mode"]?.string ?? "enforce") ?? .enforce
                let event = try rule["eventId"]?.integer.map { value throws(DomainError) in try EventID(validating: Int(value)) }
                return PolicyRule(name: name, when: when, then: effect, mode: mode, eventID: event)
            }
        }

        static func text(_ run: ReplayRun) -> String {
            var lines = ["replay \(run.id.text): \(run.status.rawValue), \(run.processed) of \(run.total) decisions"]
            if let error = run.error { lines.append("error: \(error)") }
            guard let report = run.report else { return lines.joined(separator: "\n") }
            lines.append("replayed \(report.replayed), without facts \(report.withoutFacts), changed \(report.changed)")
            lines.append("before \\ after\tpass\treview\treject")
            for (index, outcome) in RiskDecision.allCases.enumerated() {
                lines.append("\(outcome.rawValue)\t\(report.matrix[index].map(String.init).joined(separator: "\t"))")
            }
            func share(_ value: Double?) -> String { value.map { String(format: "%.3f", $0) } ?? "-" }
            for name in report.rules.keys.sorted() {
                let tally = report.rules[name] ?? ReplayReport.RuleTally()
                let precision = share(ReplayReport.precision(fraud: tally.fraudHits, legitimate: tally.legitimateHits))
                lines.append(
                    "rule \(name): \(tally.hits) hits, \(tally.errors) errors, precision \(precision), recall \(share(report.recall(flaggedFraud: tally.fraudHits)))"
                )
            }
            lines.append(
                "policy: precision \(share(report.precisionBefore)) -> \(share(report.precisionAfter)), recall \(share(report.recallBefore)) -> \(share(report.recallAfter))"
            )
            return lines.joined(separator: "\n")
        }
    }
}
