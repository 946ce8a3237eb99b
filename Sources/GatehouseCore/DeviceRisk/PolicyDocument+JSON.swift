import Foundation

/// The stored form of a `PolicyDocument` (a published version's `document` column): JSON, since a
/// version is written once per operator change and read once per policy refresh, and an operator may
/// read it in the database.
extension PolicyDocument {
    struct Stored: Codable {
        struct Entry: Codable {
            let id: UUID
            let kind: String
            let subject: String
            let value: String
            let note: String?
            let createdAt: Date
        }
        struct Rule: Codable {
            let name: String
            let when: String
            let tag: String?
            let weight: Int?
            let decide: String?
            let mode: String
            let eventId: Int?
        }
        let rules: [String: RiskRules]
        let lists: [Entry]
        let policyRules: [Rule]
    }

    static let encoder: JSONEncoder = {
        let encoder = JSONEncoder()
        encoder.outputFormatting = .sortedKeys
        encoder.dateEncodingStrategy = .millisecondsSince1970
        return encoder
    }()

    public func storedJSON() -> String {
        let stored = Stored(
            rules: Dictionary(uniqueKeysWithValues: rules.map { (String($0.key), $0.value) }),
            lists: lists.map {
                .init(id: $0.id, kind: $0.kind.rawValue, subject: $0.subject.rawValue, value: $0.value, note: $0.note, createdAt: $0.createdAt)
            },
            policyRules: policyRules.map { rule in
                var tag: String?
                var weight: Int?
                var decide: String?
                switch rule.then {
                case .tag(let name, let value): (tag, weight) = (name, value)
                case .decide(let decision): decide = decision.rawValue
                }
                return .init(
                    name: rule.name,
                    when: rule.when,
                    tag: tag,
                    weight: weight,
                    decide: decide,
                    mode: rule.mode.rawValue,
                    eventId: rule.eventID?.rawValue
                )
            }
        )
        // Every field is a plain value: encoding cannot fail.
        return String(decoding: (try? Self.encoder.encode(stored)) ?? Data("{}".utf8), as: UTF8.self)
    }

    /// Nil for text that is not a document this build wrote.
    public init?(storedJSON text: String, appID: AppID) {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .millisecondsSince1970
        guard let stored = try? decoder.decode(Stored.self, from: Data(text.utf8)) else { return nil }
        var rules: [Int: RiskRules] = [:]
        for (scope, value) in stored.rules {
            guard let number = Int(scope) else { return nil }
            rules[number] = value
        }
        var lists: [RiskListEntry] = []
        for entry in stored.lists {
            guard let kind = RiskListEntry.Kind(rawValue: entry.kind), let subject = RiskListEntry.Subject(rawValue: entry.subject) else {
                return nil
            }
            lists.append(
                .init(id: entry.id, appID: appID, kind: kind, subject: subject, value: entry.value, note: entry.note, createdAt: entry.createdAt)
            )
        }
        var policyRules: [PolicyRule] = []
        for rule in stored.policyRules {
            let then: PolicyRule.Effect
            if let tag = rule.tag, let weight = rule.weight {
                then = .tag(tag, weight: weight)
            } else if let decided = rule.decide.flatMap(RiskDecision.init(rawValue:)) {
                then = .decide(decided)
            } else {
                return nil
            }
            guard let mode = PolicyRule.Mode(rawValue: rule.mode) else { return nil }
            let event = rule.eventId.flatMap { try? EventID(validating: $0) }
            policyRules.append(PolicyRule(name: rule.name, when: rule.when, then: then, mode: mode, eventID: event))
        }
        self.init(rules: rules, lists: lists, policyRules: policyRules)
    }
}
