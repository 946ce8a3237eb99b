import Foundation

/// What a decision turned out to be, said later by the app's backend (a chargeback weeks on) or by an
/// operator. A decision keeps only its last label; every label given is in the audit log. Labels are
/// what a replay measures a policy's precision and recall against.
public struct DecisionLabel: Equatable, Sendable {
    public enum Verdict: String, Sendable, CaseIterable {
        case fraud
        case legitimate
    }

    public enum Kind: String, Sendable, CaseIterable {
        case accountTakeover = "account_takeover"
        case paymentFraud = "payment_fraud"
        case fakeAccount = "fake_account"
        case promotionAbuse = "promotion_abuse"
        case chargeback
        case other
    }

    /// A decision takes at most this many labels. Each is audited, so an app's backend that labels one
    /// decision in a loop would otherwise grow the audit log without bound.
    public static let maximumPerDecision = 20
    /// In code points, as JSON Schema's `maxLength` counts.
    public static let maximumNoteLength = 500

    public let verdict: Verdict
    public let kind: Kind
    public let note: String?
    /// The actor, as the audit log writes it (`app-server:<appKey>`, `admin-token:<name>`).
    public let labelledBy: String
    public let labelledAt: Date

    public init(verdict: Verdict, kind: Kind, note: String?, labelledBy: String, labelledAt: Date) {
        self.verdict = verdict
        self.kind = kind
        self.note = note
        self.labelledBy = labelledBy
        self.labelledAt = labelledAt
    }

    /// A label from its wire form: the verdict and kind by name, a note of printable text.
    public static func validated(
        verdict: String,
        kind: String,
        note: String?,
        by actor: Actor,
        at now: Date
    ) throws(DomainError) -> DecisionLabel {
        guard let parsedVerdict = Verdict(rawValue: verdict) else {
            throw DomainError(.invalidLabel, "label is fraud or legitimate.", field: "label")
        }
        guard let parsedKind = Kind(rawValue: kind) else {
            let kinds = Kind.allCases.map(\.rawValue).joined(separator: ", ")
            throw DomainError(.invalidLabel, "kind is one of \(kinds).", field: "kind")
        }
        if let note {
            // Control characters would let a note rewrite what a terminal or log line shows.
            let printable = note.unicodeScalars.allSatisfy { $0.properties.generalCategory != .control || $0 == "\n" }
            guard note.unicodeScalars.count <= maximumNoteLength, printable else {
                throw DomainError(
                    .invalidLabel,
                    "note is at most \(maximumNoteLength) characters, with no control characters but newlines.",
                    field: "note"
                )
            }
        }
        let kept = note.flatMap { $0.isEmpty ? nil : $0 }
        return DecisionLabel(verdict: parsedVerdict, kind: parsedKind, note: kept, labelledBy: actor.description, labelledAt: now)
    }
}
