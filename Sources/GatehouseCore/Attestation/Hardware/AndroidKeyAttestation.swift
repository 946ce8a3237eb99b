import Crypto
import CryptoExtras
import Foundation
import X509

/// What an `androidKeyAttestation` attester accepts.
public struct AndroidKeyAttestationPolicy: Equatable, Sendable {
    public let packageNames: [String]
    /// SHA-256 digests of the app's signing certificates; every digest the device reports must be one.
    public let signingCertificateDigests: [[UInt8]]
    /// `trustedEnvironment` or `strongBox`; `software` only when the operator allows software keys.
    public let minimumSecurityLevel: AndroidSecurityLevel
    public let requireVerifiedBoot: Bool
    public let requireDeviceLocked: Bool
    /// YYYYMM; nil accepts any.
    public let minimumOSPatchLevel: Int?

    public init(
        packageNames: [String],
        signingCertificateDigests: [[UInt8]],
        minimumSecurityLevel: AndroidSecurityLevel,
        requireVerifiedBoot: Bool,
        requireDeviceLocked: Bool,
        minimumOSPatchLevel: Int?
    ) {
        self.packageNames = packageNames
        self.signingCertificateDigests = signingCertificateDigests
        self.minimumSecurityLevel = minimumSecurityLevel
        self.requireVerifiedBoot = requireVerifiedBoot
        self.requireDeviceLocked = requireDeviceLocked
        self.minimumOSPatchLevel = minimumOSPatchLevel
    }
}

/// A key Android's keystore vouched for: what Gatehouse stores to check the device's later signatures.
public struct AndroidAttestedKey: Equatable, Sendable {
    /// The key's SubjectPublicKeyInfo, DER.
    public let publicKey: [UInt8]
    public let securityLevel: AndroidSecurityLevel
    public let rootOfTrust: AndroidRootOfTrust?
    public let osPatchLevel: Int?
    public let packageName: String
}

/// Google's attestation status list (https://android.googleapis.com/attestation/status): certificate
/// serial numbers, lower-case hex without leading zeros, that are revoked or suspended.
public struct AttestationRevocationList: Equatable, Sendable {
    public let serials: Set<String>

    public init(serials: Set<String>) {
        self.serials = serials
    }

    /// Parses the JSON Google publishes: `{"entries": {"<serial>": {"status": "REVOKED", ...}}}`.
    public init(json: Data) throws(DomainError) {
        struct List: Decodable { let entries: [String: Entry] }
        struct Entry: Decodable { let status: String }
        guard let list = try? JSONDecoder().decode(List.self, from: json) else {
            throw DomainError(.invalidParameter, "The revocation list is not Google's status JSON.")
        }
        serials = Set(list.entries.filter { ["REVOKED", "SUSPENDED"].contains($0.value.status) }.keys.map { $0.lowercased() })
    }

    func contains(_ serial: Certificate.SerialNumber) -> Bool {
        let trimmed = String(Hex.encode(serial.bytes).drop { $0 == "0" })
        return serials.contains(trimmed.isEmpty ? "0" : trimmed)
    }
}

/// Android Key Attestation, verified offline as developer.android.com's "Verify hardware-backed key
/// pairs with key attestation" says.
public enum AndroidKeyAttestation {
    /// Verifies the attestation chain of a key generated with `nonce` as its attestation challenge.
    public static func verify(
        chain encoded: [[UInt8]],
        nonce: [UInt8],
        policy: AndroidKeyAttestationPolicy,
        roots: [Certificate],
        revoked: AttestationRevocationList,
        at time: Date
    ) async throws(DomainError) -> AndroidAttestedKey {
        let chain = try await AttestationChain.verify(encoded, roots: roots, at: time)
        guard !chain.contains(where: { revoked.contains($0.serialNumber) }) else {
            throw DomainError(.attestationRevoked, "A certificate of the chain is on Google's revocation list.")
        }
        // Only the leaf may carry the extension: one further down the chain than the secure hardware's
        // would have been written by whoever extended the chain.
        let described = chain.map { $0.extensions.first { $0.oid == AndroidKeyDescription.oid } }
        guard let extensionValue = described[0]?.value, described.dropFirst().allSatisfy({ $0 == nil }) else {
            throw DomainError(.malformedAttestation, "The leaf certificate carries no key attestation, or another certificate does too.")
        }
        let description = try AndroidKeyDescription(derEncoded: Array(extensionValue))
        guard description.attestationChallenge == nonce else {
            throw DomainError(.attestationNonceMismatch, "The key was not generated for this challenge.")
        }
        let packageName = try checkApplication(description.applicationID, policy: policy)
        try checkIntegrity(description, policy: policy)
        return AndroidAttestedKey(
            publicKey: Array((try? chain[0].publicKey.serializeAsPEM().derBytes) ?? []),
            securityLevel: min(description.attestationSecurityLevel, description.keyMintSecurityLevel),
            rootOfTrust: description.rootOfTrust,
            osPatchLevel: description.osPatchLevel,
            packageName: packageName
        )
    }

    /// Verifies a signature by the attested key (`publicKey`, its SubjectPublicKeyInfo DER) over `signedData`, which holds a single-use server nonce
    /// (Android keys count nothing; the nonce is what makes a replay fail): ECDSA P-256 (DER) or RSA
    /// PKCS #1 v1.5, both over SHA-256, as Android's keystore signs.
    public static func verifySignature(_ signature: [UInt8], over signedData: [UInt8], publicKey: [UInt8]) throws(DomainError) {
        let refusal = DomainError(.invalidAssertionSignature, "The request is not signed by the attested key.")
        if let ecdsa = try? P256.Signing.PublicKey(derRepresentation: publicKey) {
            guard let parsed = try? P256.Signing.ECDSASignature(derRepresentation: signature),
                ecdsa.isValidSignature(parsed, for: Data(signedData))
            else { throw refusal }
            return
        }
        guard let rsa = try? _RSA.Signing.PublicKey(derRepresentation: publicKey) else {
            throw DomainError(.malformedAttestation, "The attested key is neither a P-256 nor an RSA key.")
        }
        guard rsa.isValidSignature(_RSA.Signing.RSASignature(rawRepresentation: signature), for: Data(signedData), padding: .insecurePKCS1v1_5)
        else { throw refusal }
    }

    private static func checkApplication(_ application: AndroidApplicationID?, policy: AndroidKeyAttestationPolicy) throws(DomainError) -> String {
        guard let application, let packageName = application.packageNames.first(where: policy.packageNames.contains),
            !application.signatureDigests.isEmpty, application.signatureDigests.allSatisfy(policy.signingCertificateDigests.contains)
        else { throw DomainError(.attestationAppMismatch, "The key belongs to another app than this attester's packages and signers.") }
        return packageName
    }

    private static func checkIntegrity(_ description: AndroidKeyDescription, policy: AndroidKeyAttestationPolicy) throws(DomainError) {
        let level = min(description.attestationSecurityLevel, description.keyMintSecurityLevel)
        guard level >= policy.minimumSecurityLevel else {
            throw DomainError(.attestationIntegrityInsufficient, "The key's security level is below the attester's.")
        }
        if policy.requireVerifiedBoot || policy.requireDeviceLocked {
            guard let root = description.rootOfTrust else {
                throw DomainError(.attestationIntegrityInsufficient, "The attestation says nothing of the device's boot.")
            }
            guard !policy.requireVerifiedBoot || root.verifiedBootState == .verified else {
                throw DomainError(.attestationIntegrityInsufficient, "The device did not boot a verified system.")
            }
            guard !policy.requireDeviceLocked || root.deviceLocked else {
                throw DomainError(.attestationIntegrityInsufficient, "The device's bootloader is unlocked.")
            }
        }
        if let minimum = policy.minimumOSPatchLevel {
            guard let patch = description.osPatchLevel, patch >= minimum else {
                throw DomainError(.attestationIntegrityInsufficient, "The device's security patch level is older than \(minimum).")
            }
        }
    }
}
