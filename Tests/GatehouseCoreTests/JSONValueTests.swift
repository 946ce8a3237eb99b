import Foundation
import GatehouseCore
import Testing

/// The strict JSON reader behind JWS headers, ALTCHA payloads and storage policies.
@Suite struct JSONValueTests {
    func parse(_ text: String) -> JSONValue? { JSONValue.parse(Array(text.utf8)) }

    @Test func readsEveryKindOfValue() {
        #expect(
            parse(#" {"a": [1, -2, 0, 3.5, -1e3, 2E+2, true, false, null], "b": {"c": "d"}, "": "" } "#)
                == .object([
                    "a": .array([
                        .integer(1), .integer(-2), .integer(0), .number(3.5), .number(-1000), .number(200), .bool(true), .bool(false), .null,
                    ]),
                    "b": .object(["c": .string("d")]),
                    "": .string(""),
                ])
        )
        #expect(parse("[]") == .array([]))
        #expect(parse("{}") == .object([:]))
        #expect(parse("\t\r\n 7 \n") == .integer(7))
        #expect(parse("9223372036854775807") == .integer(Int64.max))
        #expect(parse("-9223372036854775808") == .integer(Int64.min))
        // Past 64 bits a number is still a number, but no longer an integer.
        #expect(parse("9223372036854775808") == .number(9_223_372_036_854_775_808))
    }

    @Test func decodesEscapesAndUnicode() {
        #expect(parse(#""\"\\\/\b\f\n\r\t""#) == .string("\"\\/\u{08}\u{0C}\n\r\t"))
        #expect(parse(#""\u00e9\u4E2D""#) == .string("é中"))
        #expect(parse(#""\ud83d\ude00""#) == .string("😀"))
        #expect(parse("\"中文 😀\"") == .string("中文 😀"))
    }

    @Test func refusesWhatIsNotStrictJSON() {
        let refused = [
            "", " ", "{", "[1,]", "{\"a\":1,}", "[1 2]", "{\"a\" 1}", "{a:1}", "{'a':1}", "01", "+1", ".5", "1.", "1e", "-", "--1",
            "NaN", "Infinity", "1e400", "tru", "nul", "true false", "{} x", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"",
            "\"\\ud800\\u0041\"", "\"\\udc00\"", "\"tab\there\"", "\"line\nbreak\"", "{\"a\":1,\"a\":2}",
        ]
        for text in refused { #expect(parse(text) == nil, "\(text.debugDescription)") }
        #expect(JSONValue.parse([0x22, 0xFF, 0x22]) == nil, "invalid UTF-8")
        #expect(JSONValue.parse([0x22, 0xED, 0xA0, 0x80, 0x22]) == nil, "a surrogate encoded as UTF-8")
    }

    @Test func limitsNesting() {
        #expect(parse(String(repeating: "[", count: 64) + String(repeating: "]", count: 64)) != nil)
        #expect(parse(String(repeating: "[", count: 65) + String(repeating: "]", count: 65)) == nil)
        #expect(parse(String(repeating: "{\"a\":", count: 100_000)) == nil)
    }

    /// Whatever Foundation's serializer writes, the reader reads back as the same value.
    @Test func readsBackWhatFoundationWrites() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<300 {
            let (object, expected) = randomValue(depth: 0, using: &generator)
            let data = try JSONSerialization.data(withJSONObject: object, options: [.fragmentsAllowed])
            #expect(JSONValue.parse(Array(data)) == expected, "\(String(decoding: data, as: UTF8.self))")
        }
    }

    func randomValue(depth: Int, using generator: inout SystemRandomNumberGenerator) -> (Any, JSONValue) {
        switch Int.random(in: depth < 4 ? 0...6 : 0...4, using: &generator) {
        case 0: return (NSNull(), .null)
        case 1:
            let value = Bool.random(using: &generator)
            return (value, .bool(value))
        case 2:
            let value = Int64.random(in: -1_000_000_000_000...1_000_000_000_000, using: &generator)
            return (value, .integer(value))
        case 3:
            let value = Double(Int.random(in: -100_000...100_000, using: &generator)) + 0.25
            return (value, .number(value))
        case 4:
            let text = randomText(using: &generator)
            return (text, .string(text))
        case 5:
            let elements = (0..<Int.random(in: 0...4, using: &generator)).map { _ in randomValue(depth: depth + 1, using: &generator) }
            return (elements.map(\.0), .array(elements.map(\.1)))
        default:
            var object: [String: Any] = [:]
            var expected: [String: JSONValue] = [:]
            for _ in 0..<Int.random(in: 0...4, using: &generator) {
                let key = randomText(using: &generator)
                let (value, parsed) = randomValue(depth: depth + 1, using: &generator)
                object[key] = value
                expected[key] = parsed
            }
            return (object, .object(expected))
        }
    }

    /// Characters that need escaping, controls, quotes, non-ASCII and characters outside the BMP.
    func randomText(using generator: inout SystemRandomNumberGenerator) -> String {
        let alphabet: [Character] = ["a", "Z", "0", " ", "\"", "\\", "/", "\n", "\t", "\u{01}", "\u{1F}", "é", "中", "😀", "\u{7F}"]
        return String((0..<Int.random(in: 0...8, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
    }
}
