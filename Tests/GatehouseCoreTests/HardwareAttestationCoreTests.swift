import Crypto
import Foundation
import GatehouseCore
import GatehouseTestDevice
import Testing

/// The hardware flow's decisions: attester settings, the nonce, the proof fields, a new key over a
/// nonce and a kept key's assertions.
@Suite struct HardwareAttesterSettingsTests {
    let now = Date(timeIntervalSince1970: 1_800_000_000)
    let digest = String(repeating: "ab", count: 32)

    @Test func goodSettingsAreKeptAsGiven() throws {
        let apple = try AppAttestPolicy.validated(teamID: "ABCDE12345", bundleIDs: ["com.example.shop"], environment: "production")
        #expect(apple == AppAttestPolicy(teamID: "ABCDE12345", bundleIDs: ["com.example.shop"], environment: .production))
        let colons = stride(from: 0, to: 64, by: 2).map { _ in "AB" }.joined(separator: ":")
        let android = try AndroidKeyAttestationPolicy.validated(
            packageNames: ["com.example.shop"],
            signingCertificateDigests: [colons],
            securityLevel: "StrongBox",
            allowSoftware: false,
            requireVerifiedBoot: true,
            requireDeviceLocked: false,
            minimumOSPatchLevel: 202_501
        )
        #expect(
            android.signingCertificateDigestsHex == [digest] && android.minimumSecurityLevel == .strongBox && android.securityLevelName == "StrongBox"
        )
        let emulators = try AndroidKeyAttestationPolicy.validated(
            packageNames: ["com.example.shop"],
            signingCertificateDigests: [digest],
            securityLevel: "TEE",
            allowSoftware: true,
            requireVerifiedBoot: false,
            requireDeviceLocked: false,
            minimumOSPatchLevel: nil
        )
        #expect(emulators.allowsSoftware && emulators.securityLevelName == "TEE")
    }

    @Test(arguments: [
        ("abcde12345", ["com.example.shop"], "production"), ("ABCDE1234", ["com.example.shop"], "production"),
        ("ABCDE12345", [], "production"), ("ABCDE12345", ["com example"], "production"), ("ABCDE12345", ["a", "a"], "production"),
        ("ABCDE12345", ["com.example.shop"], "staging"),
    ])
    func badAppleSettingsAreRefused(team: String, bundles: [String], environment: String) {
        #expect(throws: DomainError.self) { try AppAttestPolicy.validated(teamID: team, bundleIDs: bundles, environment: environment) }
    }

    @Test func badAndroidSettingsAreRefused() {
        func attempt(
            packages: [String] = ["com.example.shop"],
            digests: [String]? = nil,
            level: String = "TEE",
            software: Bool = false,
            patch: Int? = nil
        )
            throws(DomainError)
        {
            _ = try AndroidKeyAttestationPolicy.validated(
                packageNames: packages,
                signingCertificateDigests: digests ?? [digest],
                securityLevel: level,
                allowSoftware: software,
                requireVerifiedBoot: true,
                requireDeviceLocked: true,
                minimumOSPatchLevel: patch
            )
        }
        #expect(throws: DomainError.self) { try attempt(packages: []) }
        #expect(throws: DomainError.self) { try attempt(packages: ["com/example"]) }
        #expect(throws: DomainError.self) { try attempt(digests: []) }
        #expect(throws: DomainError.self) { try attempt(digests: ["abcd"]) }
        #expect(throws: DomainError.self) { try attempt(digests: [String(repeating: "zz", count: 32)]) }
        #expect(throws: DomainError.self) { try attempt(level: "Software") }
        #expect(throws: DomainError.self) { try attempt(level: "StrongBox", software: true) }
        #expect(throws: DomainError.self) { try attempt(patch: 202_513) }
        #expect(throws: DomainError.self) { try attempt(patch: 1_999) }
    }

    @Test func aHardwareKindGoesWithItsSettingsAndAlwaysRequiresHardware() throws {
        let appID = AppID(UUID())
        let pow = Attester(appID: appID, attestID: try AttestID(validating: "ios"), createdAt: now, updatedAt: now)
        var toApple = AttesterChange()
        toApple.kind = "appAttest"
        #expect(throws: DomainError.self) { try toApple.applied(to: pow, at: now) }
        toApple.appAttest = AppAttestPolicy(teamID: "ABCDE12345", bundleIDs: ["com.example.shop"], environment: .development)
        let apple = try toApple.applied(to: pow, at: now)
        #expect(apple.kind == .appAttest && apple.requireHardwareAttestation && apple.requiresHardware)

        var optOut = AttesterChange()
        optOut.requireHardwareAttestation = false
        #expect(throws: DomainError.self) { try optOut.applied(to: apple, at: now) }
        var android = AttesterChange()
        android.androidKeyAttestation = try AndroidKeyAttestationPolicy.validated(
            packageNames: ["com.example.shop"],
            signingCertificateDigests: [digest],
            securityLevel: "TEE",
            allowSoftware: false,
            requireVerifiedBoot: true,
            requireDeviceLocked: true,
            minimumOSPatchLevel: nil
        )
        #expect(throws: DomainError.self, "Android settings on an App Attest attester") { try android.applied(to: apple, at: now) }

        var back = AttesterChange()
        back.kind = "pow"
        let powAgain = try back.applied(to: apple, at: now)
        #expect(powAgain.appAttest == nil && !powAgain.requiresHardware && powAgain.snapshot["appAttest"] == .null)
    }
}

@Suite struct AttestationNonceTests {
    let key = SymmetricKey(size: .bits256)
    let binding = PowBinding(attestID: "ios", deviceID: "AAAAAAAAAAAAAAAAAAAAAA")
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func issue(expiresAt: Date? = nil) -> String {
        var generator = SystemRandomNumberGenerator()
        return AttestationNonce.issue(binding: binding, expiresAt: expiresAt ?? now.addingTimeInterval(300), key: key, using: &generator)
    }

    @Test func aNonceIsClaimedOnlyWhereItWasIssuedAndOnlyWhileAlive() throws {
        let nonce = issue()
        #expect(nonce.utf8.count == AttestationNonce.textLength && issue() != nonce)
        let claim = try AttestationNonce.claim(nonce, binding: binding, key: key, at: now)
        #expect(claim.replayKey == "nonce:" + nonce && claim.expiresAt == now.addingTimeInterval(300))
        let tampered = String(nonce.dropLast()) + (nonce.last == "A" ? "B" : "A")
        let refusals: [(String, PowBinding, SymmetricKey, Date)] = [
            (nonce, PowBinding(attestID: "android", deviceID: binding.deviceID), key, now),
            (nonce, PowBinding(attestID: "ios", deviceID: "BBBBBBBBBBBBBBBBBBBBBB"), key, now),
            (nonce, binding, SymmetricKey(size: .bits256), now), (nonce, binding, key, now.addingTimeInterval(300)),
            (tampered, binding, key, now), (nonce + "A", binding, key, now), ("", binding, key, now),
        ]
        for (text, binding, key, time) in refusals {
            #expect(throws: DomainError.self) { try AttestationNonce.claim(text, binding: binding, key: key, at: time) }
        }
    }
}

@Suite struct HardwareProofTests {
    let keyID = Data(repeating: 7, count: 32).base64EncodedString()

    @Test func eachProofIsReadFromItsFieldsAndMixturesAreRefused() throws {
        #expect(try HardwareProof.parse(keyID: nil, attestation: nil, certificateChain: nil, assertion: nil) == nil)
        #expect(
            try HardwareProof.parse(keyID: keyID, attestation: "AAEC", certificateChain: nil, assertion: nil)
                == .appAttest(keyID: Array(repeating: 7, count: 32), attestation: [0, 1, 2])
        )
        #expect(
            try HardwareProof.parse(keyID: nil, attestation: nil, certificateChain: ["AAEC", "AwQ="], assertion: nil)
                == .androidKey(chain: [[0, 1, 2], [3, 4]])
        )
        let urlAlphabet = Base64URL.encode(Array(repeating: 0xFB, count: 32))
        #expect(
            try HardwareProof.parse(keyID: urlAlphabet, attestation: nil, certificateChain: nil, assertion: "+/8=")
                == .assertion(keyID: urlAlphabet, signature: [0xFB, 0xFF])
        )
        let refused: [(String?, String?, [String]?, String?)] = [
            (keyID, nil, nil, nil), (nil, "AAEC", nil, nil), ("AAEC", "AAEC", nil, nil), (keyID, "not base64!", nil, nil),
            (keyID, "AAEC", ["AAEC"], nil), (nil, nil, Array(repeating: "AAEC", count: 11), nil), (nil, nil, ["%%"], nil),
            (keyID, nil, nil, String(repeating: "A", count: 30_000)), (nil, nil, nil, "AAEC"),
        ]
        for (key, attestation, chain, assertion) in refused {
            #expect(throws: DomainError.self) {
                try HardwareProof.parse(keyID: key, attestation: attestation, certificateChain: chain, assertion: assertion)
            }
        }
    }
}

@Suite struct HardwareAttestationFlowTests {
    let device: SoftwareAppAttestDevice
    let attester: Attester
    let phone = DeviceID(bytes: Array(repeating: 3, count: 16))
    let nonce = "a-nonce-the-server-issued"

    init() throws {
        device = try SoftwareAppAttestDevice(teamID: "ABCDE12345", bundleID: "com.example.shop")
        let now = Date()
        attester = try Attester(
            appID: AppID(UUID()),
            attestID: AttestID(validating: "ios"),
            kind: .appAttest,
            appAttest: AppAttestPolicy(teamID: "ABCDE12345", bundleIDs: ["com.example.shop"], environment: .development),
            createdAt: now,
            updatedAt: now
        ).validated()
    }

    var trust: AttestationTrust { AttestationTrust(appleRoots: [device.root], googleRoots: [], revoked: AttestationRevocationList(serials: [])) }
    func hash(_ text: String) -> Data { Data(SHA256.hash(data: Data(text.utf8))) }

    @Test func aKeyAttestedOverTheNonceAssertsForItsDeviceOnly() async throws {
        let keyID = device.generateKey()
        let proof = HardwareProof.appAttest(
            keyID: Array(Data(base64Encoded: keyID)!),
            attestation: Array(try device.attestKey(keyID, clientDataHash: hash(nonce)))
        )
        var key = try await HardwareAttestation.attest(proof, nonce: nonce, attester: attester, device: phone, trust: trust, at: Date())
        #expect(key.deviceID == phone && key.facts.securityLevel == .secureEnclave && key.attestID == attester.attestID)
        await AppAttestTests.expectRefusal(.attestationNonceMismatch) {
            try await HardwareAttestation.attest(
                proof,
                nonce: "another nonce",
                attester: self.attester,
                device: self.phone,
                trust: self.trust,
                at: Date()
            )
        }

        let next = "the-next-nonce"
        let assertion = Array(try device.generateAssertion(keyID, clientDataHash: hash(next)))
        key.counter = try HardwareAttestation.verifyAssertion(assertion, nonce: next, key: key, device: phone, attestedBy: attester)
        #expect(key.counter == 1)
        await AppAttestTests.expectRefusal(.attestedKeyUnknown) {
            try HardwareAttestation.verifyAssertion(
                assertion,
                nonce: next,
                key: key,
                device: DeviceID(bytes: Array(repeating: 4, count: 16)),
                attestedBy: self.attester
            )
        }
        await AppAttestTests.expectRefusal(.invalidAssertionSignature) {
            try HardwareAttestation.verifyAssertion(assertion, nonce: "yet another", key: key, device: self.phone, attestedBy: self.attester)
        }
        await AppAttestTests.expectRefusal(.attestationCounterInvalid) {
            try HardwareAttestation.verifyAssertion(assertion, nonce: next, key: key, device: self.phone, attestedBy: self.attester)
        }
    }

    @Test func anAndroidChainIsNotAnAppAttestAttestersAndNoAssertionIsAttested() async throws {
        await AppAttestTests.expectRefusal(.hardwareAttestationRequired) {
            try await HardwareAttestation.attest(
                .androidKey(chain: [[1], [2]]),
                nonce: self.nonce,
                attester: self.attester,
                device: self.phone,
                trust: self.trust,
                at: Date()
            )
        }
        await AppAttestTests.expectRefusal(.attestedKeyUnknown) {
            try await HardwareAttestation.attest(
                .assertion(keyID: "k", signature: [1]),
                nonce: self.nonce,
                attester: self.attester,
                device: self.phone,
                trust: self.trust,
                at: Date()
            )
        }
    }
}
