import Crypto
import Foundation
import GatehouseCore
import GatehouseStore

/// The hardware half of a token request: the nonce a challenge hands out, and the device's proof
/// over it (a new key's attestation, kept; or an assertion by a key kept before).
struct HardwareProofOperations: Sendable {
    let access: AttesterAccess
    let trust: AttestationTrustSource

    /// A single-use nonce for the device's hardware to sign, or for its Play Integrity request to carry,
    /// when the attester requires hardware or is a `playIntegrity` attester.
    func nonce(for attester: Attester, app: App, device: DeviceID, expiresAt: Date) -> String? {
        guard attester.requiresHardware || attester.kind == .playIntegrity else { return nil }
        var generator = SystemRandomNumberGenerator()
        return AttestationNonce.issue(binding: Self.binding(attester, device), expiresAt: expiresAt, key: nonceKey(app), using: &generator)
    }

    /// The device key `proof` stands on, when it is good: a new key attested over `nonce` (and kept),
    /// or a kept key's assertion over it (its counter moved on). The nonce is spent first, right or
    /// wrong. A refusal is noted on the device row (`attestation.failed` in its risk decisions).
    func verify(
        _ proof: HardwareProof?,
        nonce: String?,
        attester: Attester,
        app: App,
        device: DeviceID,
        address: String?,
        at now: Date
    ) async throws
        -> AttestedDeviceKey
    {
        guard let proof else {
            throw DomainError(
                .hardwareAttestationRequired,
                "Attester \(attester.attestID) requires a hardware-attested device: send attestation, certificateChain or keyId with assertion.",
                field: "attestation"
            )
        }
        guard let nonce else {
            throw DomainError(.attestationNonceMismatch, "Send the challenge's nonce with the attestation or assertion.", field: "nonce")
        }
        let claim = try AttestationNonce.claim(nonce, binding: Self.binding(attester, device), key: nonceKey(app), at: now)
        guard try await access.store.useSolution(appID: app.id, replayKey: claim.replayKey, expiresAt: claim.expiresAt) else {
            throw DomainError(.attestationNonceReused, "This nonce was already used once; fetch a new challenge.", field: "nonce")
        }
        do {
            switch proof {
            case .assertion(let keyID, let signature):
                return try await verifyAssertion(
                    keyID: keyID,
                    signature: signature,
                    nonce: nonce,
                    attester: attester,
                    app: app,
                    device: device,
                    at: now
                )
            case .appAttest, .androidKey:
                return try await attestNewKey(proof, nonce: nonce, attester: attester, device: device, address: address, at: now)
            }
        } catch let refusal as DomainError {
            try await access.store.recordAttestationFailure(appID: app.id, deviceID: device, at: now)
            throw refusal
        }
    }

    private func attestNewKey(
        _ proof: HardwareProof,
        nonce: String,
        attester: Attester,
        device: DeviceID,
        address: String?,
        at now: Date
    ) async throws
        -> AttestedDeviceKey
    {
        guard attester.kind.hardwarePlatform != nil else {
            throw DomainError(
                .hardwareAttestationRequired,
                "Attester \(attester.attestID) takes assertions by a key attested with an appAttest or androidKeyAttestation attester.",
                field: "attestation"
            )
        }
        let key = try await HardwareAttestation.attest(proof, nonce: nonce, attester: attester, device: device, trust: trust.current(), at: now)
        guard try await access.store.insertAttestedKey(key, sighting: AttestationFarm.Sighting(address: address, member: "key:\(key.keyID)")) else {
            throw DomainError(.attestationKeyReused, "This key was attested before; sign with it (assertion) instead.", field: "keyId")
        }
        return key
    }

    private func verifyAssertion(
        keyID: String,
        signature: [UInt8],
        nonce: String,
        attester: Attester,
        app: App,
        device: DeviceID,
        at now: Date
    )
        async throws -> AttestedDeviceKey
    {
        guard var key = try await access.store.attestedKey(appID: app.id, keyID: keyID) else {
            throw DomainError(.attestedKeyUnknown, "No key with this id was attested for this app; attest it first.", field: "keyId")
        }
        // A hardware attester takes only its own keys; an attester that merely requires hardware
        // takes a key any of the app's hardware attesters vouched for, while that attester stands.
        guard attester.kind.hardwarePlatform == nil || key.attestID == attester.attestID,
            let vouching = try await access.store.attester(appID: app.id, attestID: key.attestID)?.attester,
            vouching.status == .active, vouching.kind.hardwarePlatform == key.platform
        else {
            throw DomainError(.attestedKeyUnknown, "The attester that vouched for this key does not stand for it here; attest again.", field: "keyId")
        }
        let counter = try HardwareAttestation.verifyAssertion(signature, nonce: nonce, key: key, device: device, attestedBy: vouching)
        if key.platform == .appAttest {
            guard try await access.store.advanceCounter(appID: app.id, keyID: keyID, to: counter, at: now) else {
                throw DomainError(.attestationCounterInvalid, "Another assertion with this counter came first; it was replayed.", field: "assertion")
            }
            key.counter = counter
        }
        return key
    }

    static func binding(_ attester: Attester, _ device: DeviceID) -> PowBinding {
        PowBinding(attestID: attester.attestID.rawValue, deviceID: device.rawValue)
    }

    private func nonceKey(_ app: App) -> SymmetricKey { Self.nonceKey(app, box: access.box) }

    /// HKDF of the master key, one per app, apart from every other derived key.
    static func nonceKey(_ app: App, box: SecretBox) -> SymmetricKey {
        box.derivedKey(purpose: "attestation-nonce-v1:\(app.appKey)")
    }
}
