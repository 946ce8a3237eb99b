import Foundation
import GatehouseCore
import GatehouseTestSupport
import Testing
import X509

/// Mutated certificates and key descriptions from the real samples: each is refused with a
/// `DomainError` or, where a mutation leaves the meaning intact, accepted; none crashes or hangs.
/// The counts are in docs/attestation.md.
struct AttestationFuzzTests {
    static let rounds = 2000

    @Test func mutatedChainsAreRefused() async throws {
        let sample = try #require(AppAttestTests.attestations.first)
        let object = try CBORValue.decode(sample.bytes("attestationBase64"))
        let certificates = object["attStmt"]?["x5c"]?.arrayItems ?? []
        let chain = certificates.compactMap(\.byteString)
        try #require(chain.count == 2)
        var random = SeededGenerator(state: 0x6365_7274)
        var refused = 0
        for round in 0..<Self.rounds {
            var mutated = chain
            let index = round % chain.count
            mutated[index] = CBORFuzzing.mutate(chain[index], using: &random)
            do {
                _ = try await AttestationChain.verify(mutated, roots: AppAttestTests.appleRoots, at: sample.time)
            } catch {
                refused += 1
            }
        }
        // A flipped bit in a signed part breaks a signature; only a change to what no one reads survives.
        #expect(refused > Self.rounds * 9 / 10)
    }

    @Test func mutatedKeyDescriptionsParseOrAreRefused() throws {
        let leaf = try Certificate(derEncoded: try AndroidKeyAttestationTests.chain("algorithm_EC_SecurityLevel_TEE")[0])
        let keyDescription = leaf.extensions.first { $0.oid.description == "1.3.6.1.4.1.11129.2.1.17" }
        let description = Array(try #require(keyDescription).value)
        #expect(throws: Never.self) { try AndroidKeyDescription(derEncoded: description) }
        var random = SeededGenerator(state: 0x6b65_7964)
        var outcomes = (parsed: 0, refused: 0)
        for _ in 0..<Self.rounds {
            do {
                _ = try AndroidKeyDescription(derEncoded: CBORFuzzing.mutate(description, using: &random))
                outcomes.parsed += 1
            } catch {
                outcomes.refused += 1
            }
        }
        #expect(outcomes.parsed + outcomes.refused == Self.rounds)
        #expect(outcomes.refused > 0)
    }
}
