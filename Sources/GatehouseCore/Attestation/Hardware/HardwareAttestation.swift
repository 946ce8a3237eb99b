import Crypto
import Foundation
import X509

/// What a device sends with a token request to prove its hardware key (docs/attestation.md).
public enum HardwareProof: Sendable, Equatable {
    /// App Attest, a new key: its key id and the attestation object made over the nonce.
    case appAttest(keyID: [UInt8], attestation: [UInt8])
    /// Android, a new key: the certificate chain (leaf first) of a key generated with the nonce as
    /// its attestation challenge.
    case androidKey(chain: [[UInt8]])
    /// A key attested before signs the nonce: App Attest's assertion object, or Android's signature.
    case assertion(keyID: String, signature: [UInt8])

    /// Base64 (either alphabet) of at most 24 KiB: an attestation object is ~5.5 KiB, a chain
    /// certificate under 2 KiB.
    static let maximumFieldCharacters = 24_576

    /// The proof among a request's fields, or nil when it sends none. Exactly one kind is accepted.
    public static func parse(
        keyID: String?,
        attestation: String?,
        certificateChain: [String]?,
        assertion: String?
    ) throws(DomainError)
        -> HardwareProof?
    {
        switch (attestation, certificateChain, assertion) {
        case (nil, nil, nil):
            guard keyID == nil else { throw DomainError(.malformedAttestation, "keyId goes with attestation or assertion.", field: "keyId") }
            return nil
        case (let attestation?, nil, nil):
            guard let keyID, let keyBytes = decoded(keyID), keyBytes.count == 32 else {
                throw DomainError(.malformedAttestation, "keyId is the base64 App Attest key id (32 bytes).", field: "keyId")
            }
            guard let object = decoded(attestation), object.count <= AppAttest.maximumObjectBytes else {
                throw DomainError(.malformedAttestation, "attestation is base64 of an attestation object of at most 16 KiB.", field: "attestation")
            }
            return .appAttest(keyID: keyBytes, attestation: object)
        case (nil, let chain?, nil):
            guard chain.count <= AttestationChain.certificateCount.upperBound else {
                throw DomainError(.malformedAttestation, "certificateChain holds 2 to 10 certificates.", field: "certificateChain")
            }
            var certificates: [[UInt8]] = []
            for text in chain {
                guard let der = decoded(text) else {
                    throw DomainError(.malformedAttestation, "certificateChain holds base64 DER certificates.", field: "certificateChain")
                }
                certificates.append(der)
            }
            return .androidKey(chain: certificates)
        case (nil, nil, let assertion?):
            guard let keyID, let keyBytes = decoded(keyID), keyBytes.count == 32 else {
                throw DomainError(.malformedAttestation, "keyId is the base64 id of the attested key (32 bytes).", field: "keyId")
            }
            guard let signature = decoded(assertion), signature.count <= AppAttest.maximumObjectBytes else {
                throw DomainError(.malformedAttestation, "assertion is base64 of at most 16 KiB.", field: "assertion")
            }
            return .assertion(keyID: Base64URL.encode(keyBytes), signature: signature)
        default:
            throw DomainError(.malformedAttestation, "Send one of attestation, certificateChain and assertion.", field: "attestation")
        }
    }

    /// Base64 in either alphabet, padded or not, as SDKs write it.
    static func decoded(_ text: String) -> [UInt8]? {
        guard text.utf8.count <= maximumFieldCharacters else { return nil }
        var unpadded = Substring(text)
        for _ in 0..<2 where unpadded.hasSuffix("=") { unpadded = unpadded.dropLast() }
        let urlAlphabet = String(unpadded.map { $0 == "+" ? "-" : $0 == "/" ? "_" : $0 })
        return Base64URL.decode(urlAlphabet)
    }
}

/// The anchors and revocations hardware attestations are checked against.
public struct AttestationTrust: Sendable {
    public let appleRoots: [Certificate]
    public let googleRoots: [Certificate]
    public let revoked: AttestationRevocationList

    public init(appleRoots: [Certificate], googleRoots: [Certificate], revoked: AttestationRevocationList) {
        self.appleRoots = appleRoots
        self.googleRoots = googleRoots
        self.revoked = revoked
    }
}

/// The decisions of the hardware flow: a new key's attestation checked against its attester, and a
/// known key's assertion over a nonce. Every device signature covers the nonce's UTF-8 bytes: App
/// Attest's client data is the nonce (so `clientDataHash` is its SHA-256), Android's attestation
/// challenge is the nonce, and an Android assertion is a SHA256withECDSA or SHA256withRSA signature
/// over it.
public enum HardwareAttestation {
    /// The key to keep, when `proof` attests a new key for `attester` over `nonce`.
    public static func attest(
        _ proof: HardwareProof,
        nonce: String,
        attester: Attester,
        device: DeviceID,
        trust: AttestationTrust,
        at now: Date
    ) async throws(DomainError) -> AttestedDeviceKey {
        let clientData = Array(nonce.utf8)
        switch proof {
        case .appAttest(let keyID, let attestation):
            guard let policy = attester.appAttest else { throw wrongKind(attester) }
            let key = try await AppAttest.verifyAttestation(
                attestation,
                keyID: keyID,
                clientDataHash: Array(SHA256.hash(data: clientData)),
                policy: policy,
                roots: trust.appleRoots,
                at: now
            )
            return AttestedDeviceKey(
                key,
                environment: policy.environment,
                appID: attester.appID,
                attestID: attester.attestID,
                deviceID: device,
                at: now
            )
        case .androidKey(let chain):
            guard let policy = attester.androidKeyAttestation else { throw wrongKind(attester) }
            let key = try await AndroidKeyAttestation.verify(
                chain: chain,
                nonce: clientData,
                policy: policy,
                roots: trust.googleRoots,
                revoked: trust.revoked,
                at: now
            )
            return AttestedDeviceKey(key, appID: attester.appID, attestID: attester.attestID, deviceID: device, at: now)
        case .assertion:
            throw DomainError(.attestedKeyUnknown, "An assertion is checked against a stored key, not attested.", field: "assertion")
        }
    }

    /// The key's new counter (Android: 0), when `signature` is the key's assertion over `nonce` for
    /// `device`. `attestedBy` is the attester that vouched for the key (its app identifiers are
    /// checked again for App Attest).
    public static func verifyAssertion(
        _ signature: [UInt8],
        nonce: String,
        key: AttestedDeviceKey,
        device: DeviceID,
        attestedBy: Attester
    )
        throws(DomainError) -> UInt32
    {
        guard key.deviceID == device, key.appID == attestedBy.appID, key.attestID == attestedBy.attestID else {
            throw DomainError(.attestedKeyUnknown, "This key was attested for another device.", field: "keyId")
        }
        let clientData = Array(nonce.utf8)
        switch key.platform {
        case .appAttest:
            guard let policy = attestedBy.appAttest, let keyID = Base64URL.decode(key.keyID) else { throw wrongKind(attestedBy) }
            return try AppAttest.verifyAssertion(
                signature,
                clientDataHash: Array(SHA256.hash(data: clientData)),
                key: AppAttestKey(keyID: keyID, publicKey: key.publicKey, bundleID: key.facts.app, receipt: [], counter: key.counter),
                policy: policy,
                previousCounter: key.counter
            )
        case .androidKey:
            try AndroidKeyAttestation.verifySignature(signature, over: clientData, publicKey: key.publicKey)
            return 0
        }
    }

    private static func wrongKind(_ attester: Attester) -> DomainError {
        DomainError(.hardwareAttestationRequired, "Attester \(attester.attestID) does not take this platform's attestation.", field: "attestId")
    }
}
