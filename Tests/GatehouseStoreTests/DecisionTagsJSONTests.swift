import Foundation
import GatehouseCore
import Testing

@testable import GatehouseStore

/// A decision's tags column, written by hand (`tagsJSON`), against what Foundation's encoder wrote
/// before: the same values, and what the store's reader decodes is the hits that were written.
@Suite struct DecisionTagsJSONTests {
    static let texts = ["", "plain", "quote \" backslash \\ slash /", "new\nline\ttab\r", "\u{01}\u{1F}\u{7F}", "é 設備 🙂", "%_!"]

    @Test func theTagsAreWhatFoundationsEncoderWrote() throws {
        var cases: [[TagHit]] = [[]]
        for text in Self.texts {
            cases.append([TagHit(tag: "velocity_device", reason: text, weight: 30)])
            cases.append([TagHit(tag: text, reason: "r", weight: -5), TagHit(tag: "emulator", reason: text + text, weight: Int.max)])
        }
        for tags in cases {
            let written = SQLDeviceRiskStore.tagsJSON(tags)
            let encoded = try JSONEncoder().encode(tags)
            let mine = try JSONSerialization.jsonObject(with: Data(written.utf8)) as? [[String: AnyHashable]]
            let foundations = try JSONSerialization.jsonObject(with: encoded) as? [[String: AnyHashable]]
            #expect(mine != nil && mine == foundations, "\(written)")
            #expect(try JSONDecoder().decode([TagHit].self, from: Data(written.utf8)) == tags)
        }
    }
}
