import Crypto
import Foundation
import GatehouseCore
import GatehouseTestDevice
import Testing
import X509

/// The refusals the recorded samples cannot show, with attestations made by a software device whose
/// root only these tests trust.
struct AppAttestDeviceTests {
    let device: SoftwareAppAttestDevice
    let policy = AppAttestPolicy(teamID: "ABCDE12345", bundleIDs: ["com.example.shop"], environment: .development)
    let clientDataHash = Data(SHA256.hash(data: Data("challenge-nonce".utf8)))

    init() throws {
        device = try SoftwareAppAttestDevice(teamID: "ABCDE12345", bundleID: "com.example.shop")
    }

    /// A root made for one test run, never a vendor's, that nothing trusts.
    static func untrustedRoot() throws -> Certificate {
        try SoftwareAppAttestDevice(teamID: "ABCDE12345", bundleID: "com.example.none").root
    }

    func verify(_ object: Data, keyID: String, hash: Data? = nil, roots: [Certificate]? = nil) async throws -> AppAttestKey {
        try await AppAttest.verifyAttestation(
            Array(object),
            keyID: Array(Data(base64Encoded: keyID) ?? Data()),
            clientDataHash: Array(hash ?? clientDataHash),
            policy: policy,
            roots: roots ?? [device.root],
            at: Date()
        )
    }

    @Test func aSoftwareDeviceAttestsAndAssertsWhereItsRootIsTrusted() async throws {
        let keyID = device.generateKey()
        let key = try await verify(try device.attestKey(keyID, clientDataHash: clientDataHash), keyID: keyID)
        #expect(key.bundleID == "com.example.shop")
        let kept = AttestedDeviceKey(
            key,
            environment: .development,
            appID: AppID(UUID()),
            attestID: try AttestID(validating: "ios"),
            deviceID: nil,
            at: Date()
        )
        #expect(kept.platform == .appAttest && kept.counter == 0 && kept.receipt == key.receipt)
        #expect(kept.facts == HardwareFacts(app: "com.example.shop", securityLevel: .secureEnclave, environment: "development"))
        #expect(Data(base64Encoded: keyID) == Data(key.keyID) && !kept.keyID.contains("+") && !kept.keyID.contains("="))
        var counter = key.counter
        for _ in 0..<3 {
            let assertion = try device.generateAssertion(keyID, clientDataHash: clientDataHash)
            counter = try AppAttest.verifyAssertion(
                Array(assertion),
                clientDataHash: Array(clientDataHash),
                key: key,
                policy: policy,
                previousCounter: counter
            )
        }
        #expect(counter == 3)
        let platformRoots = try AttestationChain.certificates(pem: PlatformRoots.appleAppAttestation)
        await AppAttestTests.expectRefusal(.untrustedAttestationChain) {
            try await verify(try device.attestKey(keyID, clientDataHash: clientDataHash), keyID: keyID, roots: platformRoots)
        }
    }

    @Test func everyTamperingIsRefusedWithItsReason() async throws {
        let keyID = device.generateKey()
        func tampered(_ change: (inout SoftwareAppAttestDevice.Tampering) -> Void) throws -> Data {
            var tampering = SoftwareAppAttestDevice.Tampering()
            change(&tampering)
            return try device.attestKey(keyID, clientDataHash: clientDataHash, tampering: tampering)
        }
        await AppAttestTests.expectRefusal(.attestationCounterInvalid) { try await verify(try tampered { $0.counter = 1 }, keyID: keyID) }
        await AppAttestTests.expectRefusal(.attestationEnvironmentMismatch) {
            try await verify(try tampered { $0.aaguid = Array("appattest".utf8) + Array(repeating: 0, count: 7) }, keyID: keyID)
        }
        await AppAttestTests.expectRefusal(.attestationKeyMismatch) {
            try await verify(try tampered { $0.credentialID = Array(repeating: 1, count: 32) }, keyID: keyID)
        }
        await AppAttestTests.expectRefusal(.attestationNonceMismatch) {
            try await verify(try tampered { $0.nonce = Array(repeating: 2, count: 32) }, keyID: keyID)
        }
        await AppAttestTests.expectRefusal(.attestationAppMismatch) {
            try await verify(try tampered { $0.bundleID = "com.example.other" }, keyID: keyID)
        }
        let past = Date() - 86_400 * 10
        await AppAttestTests.expectRefusal(.untrustedAttestationChain) {
            try await verify(try tampered { $0.leafValidity = past...(past + 86_400) }, keyID: keyID)
        }
        await AppAttestTests.expectRefusal(.attestationNonceMismatch) {
            try await verify(try device.attestKey(keyID, clientDataHash: clientDataHash), keyID: keyID, hash: Data(repeating: 3, count: 32))
        }
    }

    @Test func aReplayedAssertionIsRefused() async throws {
        let keyID = device.generateKey()
        let key = try await verify(try device.attestKey(keyID, clientDataHash: clientDataHash), keyID: keyID)
        let assertion = Array(try device.generateAssertion(keyID, clientDataHash: clientDataHash))
        let counter = try AppAttest.verifyAssertion(assertion, clientDataHash: Array(clientDataHash), key: key, policy: policy, previousCounter: 0)
        #expect(throws: DomainError.self) {
            try AppAttest.verifyAssertion(assertion, clientDataHash: Array(clientDataHash), key: key, policy: policy, previousCounter: counter)
        }
        let otherKey = device.generateKey()
        let other = try await verify(try device.attestKey(otherKey, clientDataHash: clientDataHash), keyID: otherKey)
        #expect(throws: DomainError(.invalidAssertionSignature, "The assertion is not signed by the attested key.")) {
            try AppAttest.verifyAssertion(assertion, clientDataHash: Array(clientDataHash), key: other, policy: policy, previousCounter: 0)
        }
    }
}
