import Foundation
import Testing

@testable import GatehouseCore

@Suite struct EventIDTests {
    @Test(arguments: [3300, 3350, 3400])
    func acceptsTheSDKRange(value: Int) throws {
        #expect(try EventID(validating: value).rawValue == value)
    }

    @Test(arguments: [3299, 3401, 0, -3300, Int.max, Int.min])
    func refusesEverythingElseWithAClearMessage(value: Int) {
        #expect(throws: DomainError(.invalidEventID, "Event IDs are integers from 3300 to 3400; \(value) is outside that range.", field: "eventId")) {
            try EventID(validating: value)
        }
    }
}

@Suite struct AppKeyTests {
    @Test func randomKeysAreFiveLowercaseAlphanumerics() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let key = AppKey.random(using: &generator)
            #expect(try AppKey(validating: key.rawValue) == key)
            #expect(key.rawValue.count == 5)
        }
    }

    @Test(arguments: ["", "abcd", "abcdef", "ABCDE", "ab-de", "abcd\u{e9}", "abcd\u{301}", "ab de", "abc`d", "abc{d", "abc/d", "abc:d"])
    func malformedKeysAreRefused(text: String) {
        #expect(throws: DomainError.self) { try AppKey(validating: text) }
    }
}

@Suite struct AppDraftTests {
    @Test func sortsAndDeduplicatesNothingSilently() throws {
        let draft = try AppDraft(name: "Shop", platforms: ["web", "ios"])
        #expect(draft.platforms == [.ios, .web])
        #expect(draft.name == "Shop")
    }

    @Test(arguments: [
        ("", DomainError.Code.invalidAppName),
        (" padded", .invalidAppName),
        ("padded ", .invalidAppName),
        ("tab\there", .invalidAppName),
        ("bell\u{7}", .invalidAppName),
        ("c1\u{85}x", .invalidAppName),
        (String(repeating: "x", count: 101), .invalidAppName),
    ])
    func badNamesAreRefused(name: String, code: DomainError.Code) {
        #expect(throws: DomainError.self) { try AppDraft(name: name, platforms: ["ios"]) }
        do {
            _ = try AppDraft(name: name, platforms: ["ios"])
        } catch {
            #expect(error.code == code)
            #expect(error.field == "name")
        }
    }

    @Test func nameLengthCountsUnicodeScalarsLikeJSONSchema() throws {
        // 100 scalars that render as fewer characters: accepted; 101: refused.
        let combining = String(repeating: "e\u{301}", count: 50)
        #expect(try AppDraft(name: combining, platforms: ["ios"]).name == combining)
        #expect(throws: DomainError.self) { try AppDraft(name: combining + "x", platforms: ["ios"]) }
    }

    @Test(arguments: [[String](), ["ios", "ios"], ["blackberry"]])
    func badPlatformsAreRefused(platforms: [String]) {
        #expect(throws: DomainError.self) { try AppDraft(name: "Shop", platforms: platforms) }
    }

    @Test func disabledAppsRefuseNewEvents() throws {
        var generator = SystemRandomNumberGenerator()
        var app = try AppDraft(name: "Shop", platforms: ["ios"]).makeApp(at: Date(), using: &generator)
        app.status = .disabled
        #expect(throws: DomainError.self) { try RegisteredEvent.draft(app: app, eventID: 3300, name: "login", at: Date()) }
        app.status = .active
        #expect(try RegisteredEvent.draft(app: app, eventID: 3300, name: "login", at: Date()).eventID.rawValue == 3300)
    }

    @Test func pageSizeIsBounded() throws {
        #expect(try PageSize(validating: nil).value == 50)
        #expect(try PageSize(validating: 200).value == 200)
        #expect(throws: DomainError.self) { try PageSize(validating: 0) }
        #expect(throws: DomainError.self) { try PageSize(validating: 201) }
    }
}

@Suite struct RFC3339Tests {
    @Test func parsesWhatJSONSchemaCallsADateTime() throws {
        #expect(RFC3339.parse("1970-01-01T00:00:00Z") == Date(timeIntervalSince1970: 0))
        #expect(RFC3339.parse("2026-11-22T10:00:00+01:00") == RFC3339.parse("2026-11-22T09:00:00Z"))
        #expect(RFC3339.parse("2024-02-29t12:00:00.250z")?.timeIntervalSince1970 == 1_709_208_000.25)
        let odd = try #require(RFC3339.parse("0155-05-15T19:28:50.2243-21:27"))
        #expect(odd < Date(timeIntervalSince1970: 0))
    }

    @Test(arguments: [
        "", "2026-11-22", "2026-13-01T00:00:00Z", "2023-02-29T00:00:00Z", "2026-11-22T24:00:00Z", "2026-11-22T10:00:00", "2026-11-22T10:00:00.Z",
        "2026-11-22T10:00:00Zjunk",
    ])
    func refusesWhatIsNot(text: String) {
        #expect(RFC3339.parse(text) == nil)
    }
}

@Suite struct RandomUUIDTests {
    @Test func randomUUIDsAreVersionFourWithTheRFCVariantAndDistinct() {
        var seen = Set<UUID>()
        for _ in 0..<1000 {
            let id = UUID.random()
            let text = id.uuidString.lowercased()
            #expect(Array(text)[14] == "4", "\(text)")
            #expect("89ab".contains(Array(text)[19]), "\(text)")
            seen.insert(id)
        }
        #expect(seen.count == 1000)
    }

    @Test(arguments: [true, false])
    func aDrawFillsEveryByteFromTheDeviceOrWithoutIt(fromDevice: Bool) {
        // Without the device (no descriptor left, a failed read) the system generator fills the draw.
        let draws = (0..<4).map { _ in RandomPool.draw(4096, fromDevice: fromDevice) }
        #expect(Set(draws).count == 4)
        for draw in draws {
            #expect(draw.count == 4096)
            // 16 zero bytes expected in 4 KiB, 4 the deviation: a part left unfilled shows as hundreds.
            #expect(draw.filter { $0 == 0 }.count < 64, "a draw's bytes are not all filled")
        }
        // A size that is not a whole number of the generator's 8-byte words is filled to its end, no further.
        let odd = RandomPool.draw(4_093, fromDevice: fromDevice)
        #expect(odd.count == 4_093 && odd.suffix(40).contains { $0 != 0 })
    }

    @Test func aBufferedGeneratorDrawsAgainPastEachBufferAndNeverRepeatsIt() {
        // Three refills and a part: a buffer handed out twice, or a refill that skips a draw, repeats words.
        var generator = SystemRandomBuffer()
        let words = (0..<1_700).map { _ in generator.next() }
        #expect(Set(words).count == words.count)
        // Each bit is set in about half the words (850, deviation 21): a word left unfilled shows as zeros.
        for bit in [0, 31, 63] {
            let set = words.filter { $0 >> UInt64(bit) & 1 == 1 }.count
            #expect((700...1_000).contains(set), "bit \(bit) set in \(set) of 1,700 words")
        }
    }

    @Test func aUUIDsTextIsFoundationsInLowerCase() {
        var ids = [UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)), UUID(uuidString: "FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF")!]
        ids += (0..<1000).map { _ in UUID.random() }
        for id in ids { #expect(id.text == id.uuidString.lowercased()) }
    }
}

@Suite struct TrimmingTests {
    @Test(arguments: [
        ("  application/json\t", "application/json"), ("", ""), (" \t ", ""), ("a b", "a b"), ("\u{A0}x", "\u{A0}x"), ("é ", "é"),
    ])
    func spacesAndTabsGoFromBothEnds(text: String, trimmed: String) {
        #expect(String(text.trimmingSpacesAndTabs) == trimmed)
    }
}

@Suite struct AuditNameTests {
    @Test func actorsReadBackAsTheyAreWritten() {
        for actor in [Actor(kind: .adminToken, name: "ops"), Actor(kind: .cli, name: "root"), Actor(kind: .adminToken, name: "on:call")] {
            #expect(Actor(actor.description) == actor)
        }
        for text in ["ops", "cli:", ":ops", "admin:ops", "Admin-Token:ops", ""] { #expect(Actor(text) == nil, "\(text)") }
    }

    @Test func actionsAreTheDomainsDottedNames() {
        for action in ["app.create", "risk.list.add", "sdk-config.hosts", "admin_token.revoke"] { #expect(AuditAction.isWellFormed(action)) }
        for action in ["", "App.Create", "app create", "app.create\u{0}", String(repeating: "a", count: 65), "ａpp"] {
            #expect(!AuditAction.isWellFormed(action), "\(action)")
        }
    }
}
