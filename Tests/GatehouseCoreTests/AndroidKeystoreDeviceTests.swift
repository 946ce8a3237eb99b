import Foundation
import GatehouseCore
import GatehouseTestDevice
import Testing
import X509

/// The refusals the recorded chains cannot show, with chains made by a software keystore whose root
/// only these tests trust; and the signatures by attested keys that stand for assertions on Android.
struct AndroidKeystoreDeviceTests {
    let keystore: SoftwareAndroidKeystore
    let challenge = Array("server-nonce-0123456789".utf8)
    let policy = AndroidKeyAttestationPolicy(
        packageNames: ["com.example.shop"],
        signingCertificateDigests: [[UInt8](repeating: 0xAB, count: 32)],
        minimumSecurityLevel: .trustedEnvironment,
        requireVerifiedBoot: true,
        requireDeviceLocked: true,
        minimumOSPatchLevel: 202_401
    )

    init() throws {
        keystore = try SoftwareAndroidKeystore()
    }

    func verify(
        _ chain: [[UInt8]],
        policy: AndroidKeyAttestationPolicy? = nil,
        revoked: AttestationRevocationList = AttestationRevocationList(serials: [])
    ) async throws -> AndroidAttestedKey {
        try await AndroidKeyAttestation.verify(
            chain: chain,
            nonce: challenge,
            policy: policy ?? self.policy,
            roots: [keystore.root],
            revoked: revoked,
            at: Date()
        )
    }

    @Test(arguments: [SoftwareAndroidKeystore.Algorithm.ecdsa, .rsa])
    func anAttestedKeySignsAndOnlyItsSignaturesPass(algorithm: SoftwareAndroidKeystore.Algorithm) async throws {
        let (handle, chain) = try keystore.generateKey(challenge: challenge, algorithm: algorithm)
        let key = try await verify(chain)
        #expect(key.packageName == "com.example.shop")
        #expect(key.rootOfTrust == AndroidRootOfTrust(deviceLocked: true, verifiedBootState: .verified))
        let kept = AttestedDeviceKey(key, appID: AppID(UUID()), attestID: try AttestID(validating: "android"), deviceID: nil, at: Date())
        #expect(kept.platform == .androidKey && kept.keyID.count == 43 && kept.publicKey == key.publicKey)
        #expect(
            kept.facts
                == HardwareFacts(
                    app: "com.example.shop",
                    securityLevel: .trustedEnvironment,
                    verifiedBoot: true,
                    deviceLocked: true,
                    osPatchLevel: 202_510
                )
        )
        let clientData = Array("{\"nonce\":\"abc\",\"path\":\"/api/pay\"}".utf8)
        let signature = Array(try keystore.sign(handle, Data(clientData)))
        #expect(throws: Never.self) { try AndroidKeyAttestation.verifySignature(signature, over: clientData, publicKey: key.publicKey) }
        #expect(throws: DomainError.self) {
            try AndroidKeyAttestation.verifySignature(signature, over: clientData + [0x20], publicKey: key.publicKey)
        }
        let (otherHandle, _) = try keystore.generateKey(challenge: challenge, algorithm: algorithm)
        let otherSignature = Array(try keystore.sign(otherHandle, Data(clientData)))
        #expect(throws: DomainError.self) { try AndroidKeyAttestation.verifySignature(otherSignature, over: clientData, publicKey: key.publicKey) }
    }

    @Test func whatTheHardwareReportsDecides() async throws {
        func chain(_ change: (inout SoftwareAndroidKeystore.Properties) -> Void) throws -> [[UInt8]] {
            var properties = SoftwareAndroidKeystore.Properties()
            change(&properties)
            return try keystore.generateKey(challenge: challenge, properties: properties).chain
        }
        let software = try chain { $0.securityLevel = 0 }
        await AppAttestTests.expectRefusal(.attestationIntegrityInsufficient) { try await verify(software) }
        let allowingSoftware = AndroidKeyAttestationPolicy(
            packageNames: policy.packageNames,
            signingCertificateDigests: policy.signingCertificateDigests,
            minimumSecurityLevel: .software,
            requireVerifiedBoot: false,
            requireDeviceLocked: false,
            minimumOSPatchLevel: nil
        )
        #expect(try await verify(software, policy: allowingSoftware).securityLevel == .software)
        await AppAttestTests.expectRefusal(.attestationIntegrityInsufficient) { try await verify(try chain { $0.verifiedBootState = 2 }) }
        await AppAttestTests.expectRefusal(.attestationIntegrityInsufficient) { try await verify(try chain { $0.deviceLocked = false }) }
        await AppAttestTests.expectRefusal(.attestationIntegrityInsufficient) { try await verify(try chain { $0.osPatchLevel = 202_301 }) }
        await AppAttestTests.expectRefusal(.attestationAppMismatch) { try await verify(try chain { $0.packageName = "com.example.other" }) }
        await AppAttestTests.expectRefusal(.attestationAppMismatch) {
            try await verify(try chain { $0.signingDigest = [UInt8](repeating: 0xCD, count: 32) })
        }
        let past = Date() - 86_400 * 10
        await AppAttestTests.expectRefusal(.untrustedAttestationChain) { try await verify(try chain { $0.validity = past...(past + 86_400) }) }
    }

    @Test func aRevokedCertificateAnotherChallengeOrALoneLeafIsRefused() async throws {
        let (_, chain) = try keystore.generateKey(challenge: challenge)
        let leaf = try Certificate(derEncoded: chain[0])
        let revoked = AttestationRevocationList(serials: [String(Hex.encode(leaf.serialNumber.bytes).drop { $0 == "0" })])
        await AppAttestTests.expectRefusal(.attestationRevoked) { try await verify(chain, revoked: revoked) }
        let (_, other) = try keystore.generateKey(challenge: Array("another-nonce".utf8))
        await AppAttestTests.expectRefusal(.attestationNonceMismatch) { try await verify(other) }
        await AppAttestTests.expectRefusal(.malformedAttestation) { try await verify([chain[0]]) }
        await AppAttestTests.expectRefusal(.malformedAttestation) { try await verify(Array(repeating: chain[1], count: 20)) }
    }
}
