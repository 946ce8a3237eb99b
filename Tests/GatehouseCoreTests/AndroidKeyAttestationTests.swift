import Foundation
import GatehouseCore
import Testing
import X509

/// Android Key Attestation against chains from real devices (Tests/vectors/attestation/android): EC
/// and RSA keys, TEE and StrongBox, made with the challenge "abc" by the system's packages.
struct AndroidKeyAttestationTests {
    /// The StrongBox sample is read apart: see `theStrongBoxSampleIsRefusedForItsLeafsAlgorithmEncoding`.
    static let folders = ["algorithm_EC_SecurityLevel_TEE", "algorithm_RSA_SecurityLevel_TEE"]
    static let googleRoots = (try? AttestationChain.certificates(pem: PlatformRoots.googleHardwareAttestation)) ?? []
    /// Inside every certificate's validity (the intermediates from March 2018, Google's 2016 root to May 2026).
    static let sampleTime = Date(timeIntervalSince1970: 1_577_836_800)  // 2020-01-01
    static let systemDigest = Hex.decode("301aa3cb081134501c45f1422abc66c24224fd5ded5fdc8f17e697176fd866aa")!
    static let lenient = AndroidKeyAttestationPolicy(
        packageNames: ["com.android.keychain"],
        signingCertificateDigests: [systemDigest],
        minimumSecurityLevel: .trustedEnvironment,
        requireVerifiedBoot: false,
        requireDeviceLocked: false,
        minimumOSPatchLevel: nil
    )

    @Test(arguments: folders)
    func eachRecordedChainVerifiesAtItsTime(folder: String) async throws {
        let key = try await Self.verify(folder)
        #expect(key.packageName == "com.android.keychain")
        #expect(key.securityLevel == .trustedEnvironment)
        #expect(key.rootOfTrust == AndroidRootOfTrust(deviceLocked: false, verifiedBootState: .unverified))
        #expect(key.publicKey.count > 64)
    }

    /// Before the intermediates were issued (March 2018) and after they expire (March 2028).
    @Test(arguments: folders)
    func theSameChainIsRefusedOutsideItsCertificatesValidity(folder: String) async throws {
        for time in [Date(timeIntervalSince1970: 1_483_228_800), Date(timeIntervalSince1970: 1_861_920_000)] {
            await AppAttestTests.expectRefusal(.untrustedAttestationChain) { try await Self.verify(folder, at: time) }
        }
    }

    /// Google's 2016 root certificate expired in May 2026; its key lives on in the 2022 certificate, so
    /// the TEE chains still verify today (only their challenge, long spent, keeps them out of the flow).
    @Test(arguments: folders.filter { $0.hasSuffix("TEE") })
    func theTEEChainsStillLeadToGooglesCurrentRootCertificate(folder: String) async throws {
        let key = try await Self.verify(folder, roots: Self.googleRoots, at: Date())
        #expect(key.securityLevel == .trustedEnvironment)
    }

    /// Its leaf names ecdsa-with-SHA256 with a NULL parameter, which RFC 5758 3.2 forbids:
    /// swift-certificates refuses it, and OpenSSL 3 reports a signature failure
    /// (tests/interop/attestation_vectors.py). Its root (serial e35d38c6897d47e8) is not one Google lists.
    @Test func theStrongBoxSampleIsRefusedForItsLeafsAlgorithmEncoding() async throws {
        let folder = "algorithm_EC_SecurityLevel_StrongBox"
        await AppAttestTests.expectRefusal(.malformedAttestation) { try await Self.verify(folder) }
    }

    @Test func hardwareFactsDecideWhateverTheAppSays() async throws {
        let folder = "algorithm_EC_SecurityLevel_TEE"
        // These devices booted an unverified system with the bootloader unlocked: a rooted device.
        await AppAttestTests.expectRefusal(.attestationIntegrityInsufficient) {
            try await Self.verify(folder, policy: Self.policy(requireVerifiedBoot: true))
        }
        await AppAttestTests.expectRefusal(.attestationIntegrityInsufficient) {
            try await Self.verify(folder, policy: Self.policy(requireDeviceLocked: true))
        }
        await AppAttestTests.expectRefusal(.attestationIntegrityInsufficient) {
            try await Self.verify(folder, policy: Self.policy(minimumSecurityLevel: .strongBox))
        }
        await AppAttestTests.expectRefusal(.attestationIntegrityInsufficient) {
            try await Self.verify(folder, policy: Self.policy(minimumOSPatchLevel: 209_912))
        }
    }

    @Test func anAttestationForAnythingElseIsRefused() async throws {
        let folder = "algorithm_RSA_SecurityLevel_TEE"
        await AppAttestTests.expectRefusal(.attestationNonceMismatch) { try await Self.verify(folder, nonce: Array("abd".utf8)) }
        await AppAttestTests.expectRefusal(.attestationAppMismatch) {
            try await Self.verify(folder, policy: Self.policy(packages: ["com.example.app"]))
        }
        await AppAttestTests.expectRefusal(.attestationAppMismatch) {
            try await Self.verify(folder, policy: Self.policy(digests: [[UInt8](repeating: 9, count: 32)]))
        }
        let intermediate = try Certificate(derEncoded: try Self.chain(folder)[1])
        let revoked = AttestationRevocationList(serials: [String(Hex.encode(intermediate.serialNumber.bytes).drop { $0 == "0" })])
        await AppAttestTests.expectRefusal(.attestationRevoked) { try await Self.verify(folder, revoked: revoked) }
        let throwaway = try AppAttestDeviceTests.untrustedRoot()
        await AppAttestTests.expectRefusal(.untrustedAttestationChain) { try await Self.verify(folder, roots: [throwaway]) }
    }

    @Test func googlesStatusListParses() throws {
        let json = try Data(contentsOf: AppAttestSamples.folder.appendingPathComponent("android/status.json"))
        let list = try AttestationRevocationList(json: json)
        #expect(list.serials.contains("cc66e9a93713b6e643b26c15879786f7"))
        #expect(list.serials.count == 5)
        #expect(throws: DomainError.self) { try AttestationRevocationList(json: Data("[]".utf8)) }
    }

    static func policy(
        packages: [String] = ["com.android.keychain"],
        digests: [[UInt8]] = [systemDigest],
        minimumSecurityLevel: AndroidSecurityLevel = .trustedEnvironment,
        requireVerifiedBoot: Bool = false,
        requireDeviceLocked: Bool = false,
        minimumOSPatchLevel: Int? = nil
    ) -> AndroidKeyAttestationPolicy {
        AndroidKeyAttestationPolicy(
            packageNames: packages,
            signingCertificateDigests: digests,
            minimumSecurityLevel: minimumSecurityLevel,
            requireVerifiedBoot: requireVerifiedBoot,
            requireDeviceLocked: requireDeviceLocked,
            minimumOSPatchLevel: minimumOSPatchLevel
        )
    }

    /// The chain's DER, leaf first, as a device sends it.
    static func chain(_ folder: String) throws -> [[UInt8]] {
        try (0..<4).map { index in
            let pem = try String(contentsOf: AppAttestSamples.folder.appendingPathComponent("android/\(folder)/cert\(index).pem"), encoding: .utf8)
            return try AttestationChain.derBlocks(pem: pem)[0]
        }
    }

    /// Verifies a recorded chain, trusting Google's roots and the chain's own last certificate.
    static func verify(
        _ folder: String,
        nonce: [UInt8] = Array("abc".utf8),
        policy: AndroidKeyAttestationPolicy = lenient,
        roots: [Certificate]? = nil,
        revoked: AttestationRevocationList = AttestationRevocationList(serials: []),
        at time: Date = sampleTime
    ) async throws -> AndroidAttestedKey {
        let chain = try chain(folder)
        return try await AndroidKeyAttestation.verify(
            chain: chain,
            nonce: nonce,
            policy: policy,
            roots: roots ?? googleRoots + [try Certificate(derEncoded: chain[3])],
            revoked: revoked,
            at: time
        )
    }
}
