// DeviceRisk: rules operators write as expressions over a risk query's facts.
// Serves the fraud team's side of seed 002's risk decisions.

import ArgumentParser
import Foundation
import GatehouseCore
import GatehouseOperations

/// The fraud team's rules at the host, through the same operations (and checks) as the admin API.
func withPolicyRuleOperations<T: Sendable>(
    _ common: CommonOptions,
    _ body: @Sendable (PolicyRuleOperations, ChangeOrigin) async throws -> T
) async throws -> T {
    try await withOperatorStore(common) { store, configuration, origin in
        let box = try configuration.loadSecretBox().box
        try await prepareStore(store, box: box, migrate: false, logger: .init(label: "gatehouse"))
        let clock = SystemClock()
        let apps = AppOperations(store: store, box: box, clock: clock)
        return try await body(PolicyRuleOperations(store: store.deviceRisk, apps: apps, clock: clock), origin)
    }
}

extension RulesCommand {
    struct List: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "List an app's policy rules, one a line.")
        @Argument(help: "The appKey.") var appKey: String
        @OptionGroup var common: CommonOptions

        func run() async throws {
            let rules = try await withPolicyRuleOperations(common) { operations, _ in
                try await operations.rules(try AppKey(validating: appKey))
            }
            for rule in rules {
                let scope = rule.eventID.map { "event \($0.rawValue)" } ?? "every event"
                print("\(rule.name)\t\(rule.mode.rawValue)\t\(scope)\t\(rule.effectText)\t\(rule.when)")
            }
        }
    }

    struct Put: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Create a policy rule, or replace the one of its name.")
        @Argument(help: "The appKey.") var appKey: String
        @Option(help: "The rule's name (a-z, 0-9, _ . -).") var name: String
        @Option(help: "The condition, in Gatehouse's subset of CEL (docs/risk.md).") var when: String
        @Option(help: "A tag of the rule's own, rule.something (with --weight).") var tag: String?
        @Option(help: "The tag's weight, 0 to 100.") var weight: Int?
        @Option(help: "A decision instead of a tag: pass, review or reject.") var decide: String?
        @Option(help: "enforce or monitor.") var mode: String = "enforce"
        @Option(help: "The one registered event the rule judges; every event when absent.") var event: Int?
        @OptionGroup var common: CommonOptions

        func run() async throws {
            let then: PolicyRule.Effect
            switch (tag, weight, decide.flatMap(RiskDecision.init(rawValue:))) {
            case (let tag?, let weight?, nil): then = .tag(tag, weight: weight)
            case (nil, nil, let decision?): then = .decide(decision)
            default: throw ValidationError("Give --tag with --weight, or --decide pass|review|reject.")
            }
            guard let mode = PolicyRule.Mode(rawValue: mode) else { throw ValidationError("--mode is enforce or monitor.") }
            let rule = try await withPolicyRuleOperations(common) { [name, when, event, appKey] operations, origin in
                try await operations.put(
                    try AppKey(validating: appKey),
                    name: name,
                    when: when,
                    then: then,
                    mode: mode,
                    eventID: event,
                    origin: origin
                )
            }
            print("\(rule.name): \(rule.mode.rawValue), \(rule.effectText)")
        }
    }

    struct Remove: AsyncParsableCommand {
        static let configuration = CommandConfiguration(abstract: "Remove a policy rule.")
        @Argument(help: "The appKey.") var appKey: String
        @Option(help: "The rule's name.") var name: String
        @OptionGroup var common: CommonOptions

        func run() async throws {
            try await withPolicyRuleOperations(common) { [name, appKey] operations, origin in
                try await operations.remove(try AppKey(validating: appKey), name: name, origin: origin)
            }
            print("removed \(name)")
        }
    }
}
