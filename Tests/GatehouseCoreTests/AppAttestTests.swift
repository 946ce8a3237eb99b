import Foundation
import GatehouseCore
import Testing
import X509

/// Apple App Attest against the attestations and assertions recorded on real devices
/// (Tests/vectors/attestation/apple), at their own times and at today's.
struct AppAttestTests {
    static let samples = (try? AppAttestSamples.load()) ?? []
    static let attestations = samples.filter { $0.type == "attestation" }
    static let assertions = samples.filter { $0.type == "assertion" }
    static let appleRoots = (try? AttestationChain.certificates(pem: PlatformRoots.appleAppAttestation)) ?? []

    @Test func theVectorsAreThere() {
        #expect(Self.attestations.count == 2)
        #expect(Self.assertions.count >= 2)
        #expect(Self.appleRoots.count == 1)
    }

    @Test(arguments: attestations)
    func eachRecordedAttestationVerifiesAtItsTime(sample: AppAttestSamples) async throws {
        let key = try await Self.verify(sample)
        #expect(key.keyID == sample.bytes("keyIdBase64"))
        #expect(key.bundleID == sample["bundleIdentifier"])
        #expect(key.counter == 0)
        #expect(key.receipt.count > 1000)
        #expect(key.publicKey.count == 65)
    }

    @Test(arguments: attestations)
    func theSameAttestationIsRefusedToday(sample: AppAttestSamples) async throws {
        await #expect(throws: DomainError.self) { try await Self.verify(sample, at: Date()) }
        await Self.expectRefusal(.untrustedAttestationChain) { try await Self.verify(sample, at: Date()) }
    }

    @Test(arguments: attestations)
    func anAttestationForAnythingElseIsRefused(sample: AppAttestSamples) async throws {
        let team = sample["teamIdentifier"]
        let bundle = sample["bundleIdentifier"]
        await Self.expectRefusal(.attestationAppMismatch) {
            try await Self.verify(sample, policy: AppAttestPolicy(teamID: "ABCDE12345", bundleIDs: [bundle], environment: .development))
        }
        await Self.expectRefusal(.attestationAppMismatch) {
            try await Self.verify(sample, policy: AppAttestPolicy(teamID: team, bundleIDs: ["com.example.other"], environment: .development))
        }
        await Self.expectRefusal(.attestationEnvironmentMismatch) {
            try await Self.verify(sample, policy: AppAttestPolicy(teamID: team, bundleIDs: [bundle], environment: .production))
        }
        await Self.expectRefusal(.attestationNonceMismatch) {
            try await Self.verify(sample, clientDataHash: [UInt8](repeating: 7, count: 32))
        }
        await Self.expectRefusal(.attestationKeyMismatch) {
            try await Self.verify(sample, keyID: [UInt8](repeating: 1, count: 32))
        }
        let throwawayRoot = try AppAttestDeviceTests.untrustedRoot()
        await Self.expectRefusal(.untrustedAttestationChain) { try await Self.verify(sample, roots: [throwawayRoot]) }
    }

    @Test func malformedAttestationObjectsAreRefusedAsSuch() async throws {
        let sample = try #require(Self.attestations.first)
        let object = sample.bytes("attestationBase64")
        for broken in [Array(object.prefix(object.count / 2)), object + [0], [0xA0], Array(repeating: 0x9F, count: 16), []] {
            await Self.expectRefusal(.malformedAttestation) { try await Self.verify(sample, object: broken) }
        }
        await Self.expectRefusal(.malformedAttestation) {
            _ = try await AttestationChain.verify(Array(repeating: [0x30, 0x00], count: 3), roots: Self.appleRoots, at: Date())
        }
        await Self.expectRefusal(.malformedAttestation) {
            _ = try await AttestationChain.verify(Array(repeating: [0x30, 0x00], count: 20), roots: Self.appleRoots, at: Date())
        }
        await Self.expectRefusal(.malformedAttestation) {
            _ = try await AttestationChain.verify([[0x30, 0x00]], roots: Self.appleRoots, at: Date())
        }
    }

    @Test(arguments: assertions)
    func eachRecordedAssertionVerifiesOnceItsCounterMoves(sample: AppAttestSamples) async throws {
        let attestation = try #require(Self.attestations.first { $0["keyIdBase64"] == sample["keyIdBase64"] })
        let key = try await Self.verify(attestation)
        let policy = Self.policy(for: sample)
        let counter = try #require(UInt32(sample["counter"]))
        let assertion = sample.bytes("assertionBase64")
        let hash = sample.bytes("clientDataHashSha256Base64")
        let moved = try AppAttest.verifyAssertion(assertion, clientDataHash: hash, key: key, policy: policy, previousCounter: counter - 1)
        #expect(moved == counter)
        #expect(throws: DomainError(.attestationCounterInvalid, "The assertion's counter does not increase; it was replayed.")) {
            try AppAttest.verifyAssertion(assertion, clientDataHash: hash, key: key, policy: policy, previousCounter: counter)
        }
        #expect(throws: DomainError(.invalidAssertionSignature, "The assertion is not signed by the attested key.")) {
            try AppAttest.verifyAssertion(assertion, clientDataHash: [UInt8](repeating: 0, count: 32), key: key, policy: policy, previousCounter: 0)
        }
        #expect(throws: DomainError.self) {
            try AppAttest.verifyAssertion(Array(assertion.dropLast()), clientDataHash: hash, key: key, policy: policy, previousCounter: 0)
        }
    }

    static func policy(for sample: AppAttestSamples) -> AppAttestPolicy {
        AppAttestPolicy(teamID: sample["teamIdentifier"], bundleIDs: [sample["bundleIdentifier"]], environment: .development)
    }

    static func verify(
        _ sample: AppAttestSamples,
        object: [UInt8]? = nil,
        keyID: [UInt8]? = nil,
        clientDataHash: [UInt8]? = nil,
        policy: AppAttestPolicy? = nil,
        roots: [Certificate]? = nil,
        at time: Date? = nil
    ) async throws -> AppAttestKey {
        try await AppAttest.verifyAttestation(
            object ?? sample.bytes("attestationBase64"),
            keyID: keyID ?? sample.bytes("keyIdBase64"),
            clientDataHash: clientDataHash ?? sample.bytes("clientDataHashSha256Base64"),
            policy: policy ?? Self.policy(for: sample),
            roots: roots ?? appleRoots,
            at: time ?? sample.time
        )
    }

    static func expectRefusal(
        _ code: DomainError.Code,
        sourceLocation: SourceLocation = #_sourceLocation,
        _ body: () async throws -> some Any
    )
        async
    {
        do {
            _ = try await body()
            Issue.record("accepted; expected \(code.rawValue)", sourceLocation: sourceLocation)
        } catch let error as DomainError {
            #expect(error.code == code, "\(error)", sourceLocation: sourceLocation)
        } catch {
            Issue.record("threw \(error); expected \(code.rawValue)", sourceLocation: sourceLocation)
        }
    }
}

extension AppAttestSamples: CustomTestStringConvertible {
    var testDescription: String { "\(self["type"]) \(self["id"].prefix(8))" }

    func bytes(_ key: String) -> [UInt8] { Array(Data(base64Encoded: self[key]) ?? Data()) }

    /// The sample's own time: its certificates were valid then.
    var time: Date { (try? Date(self["timestamp"], strategy: .iso8601.year().month().day().time(includingFractionalSeconds: true))) ?? Date() }
}
