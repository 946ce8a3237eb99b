import Foundation
import GatehouseCore
import GatehouseTestSupport
import Testing

struct CBORTests {
    @Test func decodesAnAppAttestAttestationObject() throws {
        let sample = try #require(AppAttestSamples.load().first { $0.type == "attestation" })
        let object = try CBORValue.decode(Array(try #require(Data(base64Encoded: sample["attestationBase64"]))))
        #expect(object["fmt"] == .text("apple-appattest"))
        #expect(object["attStmt"]?["x5c"]?.arrayItems?.count == 2)
        #expect(object["attStmt"]?["receipt"]?.byteString?.isEmpty == false)
        #expect(object["authData"]?.byteString?.count ?? 0 > 37)
    }

    @Test func decodesEachKindItUses() throws {
        // {"a": [0, 23, 24, 255, 65536, -1, -500], "b": h'0102', "c": true, "d": null}
        let input: [UInt8] = [
            0xA4, 0x61, 0x61, 0x87, 0x00, 0x17, 0x18, 0x18, 0x18, 0xFF, 0x1A, 0x00, 0x01, 0x00, 0x00, 0x20, 0x39, 0x01, 0xF3,
            0x61, 0x62, 0x42, 0x01, 0x02, 0x61, 0x63, 0xF5, 0x61, 0x64, 0xF6,
        ]
        let value = try CBORValue.decode(input)
        #expect(value["a"] == .array([.unsigned(0), .unsigned(23), .unsigned(24), .unsigned(255), .unsigned(65536), .negative(0), .negative(499)]))
        #expect(value["b"] == .bytes([1, 2]))
        #expect(value["c"] == .bool(true))
        #expect(value["d"] == .null)
    }

    @Test(
        arguments: [
            ([0x5F, 0x41, 0x00, 0xFF], CBORError.indefiniteLength),
            ([0x9F, 0x00, 0xFF], .indefiniteLength),
            ([0xBF, 0x61, 0x61, 0x00, 0xFF], .indefiniteLength),
            ([0xA2, 0x61, 0x61, 0x00, 0x61, 0x61, 0x01], .duplicateKey),
            ([0xB1] + (0..<17).flatMap { [0x18, UInt8(24 + $0), 0x00] }, .tooManyEntries),
            ([0x00, 0x00], .trailingBytes),
            ([0x42, 0x01], .truncated),
            ([0x5B, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00], .truncated),
            ([0x9B, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00], .truncated),
            ([0x18, 0x05], .notShortestForm),
            ([0x19, 0x00, 0xFF], .notShortestForm),
            ([0x62, 0xC3, 0x28], .invalidUTF8),
            ([0xC1, 0x00], .unsupportedType(major: 6, info: 1)),
            ([0xF9, 0x3C, 0x00], .unsupportedType(major: 7, info: 25)),
            ([0x1C], .unsupportedType(major: 0, info: 28)),
            ([], .truncated),
        ] as [([UInt8], CBORError)]
    )
    func refusesWhatAttestationObjectsNeverCarry(input: [UInt8], error: CBORError) {
        #expect(throws: error) { try CBORValue.decode(input) }
    }

    @Test func refusesNestingPastItsDepth() throws {
        let deep = [UInt8](repeating: 0x81, count: CBORValue.maximumDepth) + [0x00]
        #expect(throws: CBORError.tooDeep) { try CBORValue.decode(deep) }
        let allowed = [UInt8](repeating: 0x81, count: CBORValue.maximumDepth - 1) + [0x00]
        #expect(throws: Never.self) { try CBORValue.decode(allowed) }
    }

    /// Random and mutated inputs: each decodes or is refused with a `CBORError`; none crashes, hangs or
    /// allocates what its header claims. The count is in docs/attestation.md.
    @Test func fuzzedInputsAreDecodedOrRefused() throws {
        let sample = try #require(AppAttestSamples.load().first { $0.type == "attestation" })
        let seed = Array(try #require(Data(base64Encoded: sample["attestationBase64"])))
        var random = SeededGenerator(state: 0x6761_7465_686F_7573)
        var decoded = 0
        var refused = 0
        for round in 0..<CBORFuzzing.rounds {
            let input = round.isMultiple(of: 2) ? CBORFuzzing.randomBytes(using: &random) : CBORFuzzing.mutate(seed, using: &random)
            do {
                _ = try CBORValue.decode(input)
                decoded += 1
            } catch {
                refused += 1
            }
        }
        #expect(decoded + refused == CBORFuzzing.rounds)
        #expect(refused > CBORFuzzing.rounds / 2)
    }
}

enum CBORFuzzing {
    static let rounds = 4000

    static func randomBytes(using random: inout SeededGenerator) -> [UInt8] {
        (0..<Int.random(in: 0...64, using: &random)).map { _ in UInt8.random(in: 0...255, using: &random) }
    }

    /// Flips, overwrites, inserts, deletes or truncates a few bytes of a real input.
    static func mutate(_ seed: [UInt8], using random: inout SeededGenerator) -> [UInt8] {
        var bytes = seed
        for _ in 0..<Int.random(in: 1...4, using: &random) where !bytes.isEmpty {
            let index = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<5, using: &random) {
            case 0: bytes[index] ^= UInt8(1 << Int.random(in: 0..<8, using: &random))
            case 1: bytes[index] = UInt8.random(in: 0...255, using: &random)
            case 2: bytes.insert(UInt8.random(in: 0...255, using: &random), at: index)
            case 3: bytes.remove(at: index)
            default: bytes.removeSubrange(index...)
            }
        }
        return bytes
    }
}

/// The App Attest samples of Tests/vectors/attestation/apple (recorded on real devices): the YAML's
/// top-level scalars per document, which is all the tests read.
struct AppAttestSamples {
    let fields: [String: String]
    var type: String? { fields["type"] }
    subscript(key: String) -> String { fields[key] ?? "" }

    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .appendingPathComponent("../vectors/attestation").standardizedFileURL

    static func load() throws -> [AppAttestSamples] {
        try ["ios-14.2.yaml", "ios-14.4.yaml"].flatMap { name in
            let text = try String(contentsOf: folder.appendingPathComponent("apple/\(name)"), encoding: .utf8)
            return text.components(separatedBy: "\n---").map { document in
                var fields: [String: String] = [:]
                for line in document.split(separator: "\n") where !line.hasPrefix(" ") {
                    guard let colon = line.firstIndex(of: ":") else { continue }
                    let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
                    fields[String(line[..<colon])] = value.trimmingCharacters(in: CharacterSet(charactersIn: "'"))
                }
                return AppAttestSamples(fields: fields)
            }
        }
    }
}
