import Foundation
import GatehouseCore
import Testing

/// Core's reading of a label: the verdict and kind by name, a note people can read.
@Suite struct DecisionLabelTests {
    let actor = Actor(kind: .appServer, name: "ab12c")
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aLabelNamesItsVerdictKindAndAuthor() throws {
        let label = try DecisionLabel.validated(verdict: "fraud", kind: "account_takeover", note: "line\nsecond 🙂", by: actor, at: now)
        #expect(label.verdict == .fraud && label.kind == .accountTakeover && label.labelledBy == "app-server:ab12c" && label.labelledAt == now)
        #expect(try DecisionLabel.validated(verdict: "legitimate", kind: "other", note: "", by: actor, at: now).note == nil)
        #expect(Actor("app-server:ab12c") == actor)
    }

    @Test(
        arguments: [
            ("Fraud", "other", nil), ("fraud", "Chargeback", nil), ("", "other", nil), ("fraud", "other", String(repeating: "é", count: 501)),
            ("fraud", "other", "bell\u{07}"), ("fraud", "other", "escape\u{1b}[2J"), ("fraud", "other", "nul\u{0}"),
        ] as [(String, String, String?)]
    )
    func anythingElseIsRefusedWithItsField(verdict: String, kind: String, note: String?) {
        #expect(throws: DomainError.self) { try DecisionLabel.validated(verdict: verdict, kind: kind, note: note, by: actor, at: now) }
        do {
            _ = try DecisionLabel.validated(verdict: verdict, kind: kind, note: note, by: actor, at: now)
        } catch {
            #expect(error.code == .invalidLabel && ["label", "kind", "note"].contains(error.field ?? ""))
        }
    }

    @Test func aNoteOfFiveHundredCharactersIsKept() throws {
        let note = String(repeating: "é", count: 500)
        #expect(try DecisionLabel.validated(verdict: "fraud", kind: "other", note: note, by: actor, at: now).note == note)
    }
}
