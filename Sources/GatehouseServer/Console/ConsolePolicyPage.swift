import Foundation
import GatehouseCore

/// The policy page's values: the rules, the editor (with what was written and a refusal in place),
/// the versions.
struct PolicyPage: ConsolePage {
    static let template = "policy"

    struct Rule {
        let name: String
        let mode: String
        let otherMode: String
        let scope: String
        let effect: String
        let when: String

        init(_ rule: PolicyRule) {
            name = rule.name
            mode = rule.mode.rawValue
            otherMode = rule.mode == .enforce ? "monitor" : "enforce"
            scope = rule.eventID.map { "event \($0.rawValue)" } ?? "every event"
            effect = rule.effectText
            when = rule.when
        }
    }

    /// The editor's fields, as written (kept when a refusal renders the page again).
    struct Draft {
        var name = ""
        var when = ""
        var tag = ""
        var weight = ""
        var decide = ""
        var mode = "monitor"
        var event = ""

        init() {}

        init(_ form: [String: String]) {
            name = form["name"]?.trimmingCharacters(in: .whitespaces) ?? ""
            when = form["when"] ?? ""
            tag = form["tag"]?.trimmingCharacters(in: .whitespaces) ?? ""
            weight = form["weight"]?.trimmingCharacters(in: .whitespaces) ?? ""
            decide = form["decide"] ?? ""
            mode = form["mode"] ?? "enforce"
            event = form["event"]?.trimmingCharacters(in: .whitespaces) ?? ""
        }

        /// A tag with its weight, or a decision; the same refusal as the API's otherwise.
        func effect() throws(DomainError) -> PolicyRule.Effect {
            if !tag.isEmpty {
                guard let value = Int(weight) else {
                    throw DomainError(.invalidPolicyRule, "A tag needs a weight from 0 to 100.", field: "then.weight")
                }
                return .tag(tag, weight: value)
            }
            guard let decision = RiskDecision(rawValue: decide) else {
                throw DomainError(.invalidPolicyRule, "A rule adds a tag with a weight, or decides pass, review or reject.", field: "then")
            }
            return .decide(decision)
        }
    }

    /// An option of a select, the one written selected.
    struct Choice {
        let value: String
        let selected: Bool
    }

    /// A refusal shown in place: the message, and for an expression the line it points into with a
    /// caret under the column.
    struct Refusal {
        let message: String
        let line: String?
        let caret: String?

        init(_ error: DomainError, written: String) {
            message = error.detail
            var line: String?
            var caret: String?
            let position = error.detail.prefix { $0 != " " }.dropLast().split(separator: ":")
            if error.field == "when", position.count == 2, let row = Int(position[0]), let column = Int(position[1]) {
                // A browser's textarea sends CRLF, one Character in Swift: split on any line end.
                let lines = written.split(omittingEmptySubsequences: false, whereSeparator: \.isNewline)
                if lines.indices.contains(row - 1) {
                    line = String(lines[row - 1])
                    caret = String(repeating: " ", count: max(0, column - 1)) + "^"
                }
            }
            (self.line, self.caret) = (line, caret)
        }
    }

    struct Version {
        let number: Int
        let publishedAt: String
        let publishedBy: String
        let change: String
        let rules: Int
        let entries: Int
        let current: Bool

        init(_ version: PolicyVersion, current: Bool) {
            number = version.number
            publishedAt = ConsoleText.time(version.publishedAt)
            publishedBy = version.publishedBy
            change = version.change
            rules = version.document.policyRules.count
            entries = version.document.lists.count
            self.current = current
        }
    }

    struct Uncompiled {
        let rule: String
        let error: String
    }

    let title: String
    let appKey: String
    let rules: [Rule]
    let draft: Draft
    let error: Refusal?
    let versions: [Version]
    let uncompiled: [Uncompiled]
    let decisions: [Choice]
    let modes: [Choice]

    init(title: String, appKey: String, rules: [Rule], draft: Draft, error: Refusal?, versions: [Version], uncompiled: [Uncompiled]) {
        (self.title, self.appKey, self.rules, self.draft, self.error) = (title, appKey, rules, draft, error)
        (self.versions, self.uncompiled) = (versions, uncompiled)
        decisions = ["", "review", "reject", "pass"].map { Choice(value: $0, selected: $0 == draft.decide) }
        modes = ["monitor", "enforce"].map { Choice(value: $0, selected: $0 == draft.mode) }
    }
}
