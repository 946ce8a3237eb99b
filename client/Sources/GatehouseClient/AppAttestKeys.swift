import Crypto
import Foundation
import GatehouseAPI

#if canImport(DeviceCheck) && !os(watchOS)
import DeviceCheck
#endif

/// App Attest as the client drives it: the three calls of `DCAppAttestService`. On Apple platforms
/// `DeviceCheckAppAttest` makes them on the Secure Enclave; tests on Linux pass GatehouseTestDevice's
/// software device, which answers in the same formats under a throwaway root.
public protocol AppAttestKeyService: Sendable {
    /// A new key; its id is base64 of SHA-256 of the public key.
    func generateKey() async throws -> String
    /// Apple's attestation object for the key, over `clientDataHash`.
    func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data
    /// An assertion by the key over `clientDataHash`, its counter one higher than the last.
    func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data
}

#if canImport(DeviceCheck) && !os(watchOS)
/// `DCAppAttestService.shared`, on devices that support it (`isSupported`; not the simulator). The
/// completion-handler calls are wrapped here rather than the async ones called, so that no
/// non-Sendable service object crosses an isolation boundary.
public struct DeviceCheckAppAttest: AppAttestKeyService {
    public init() {}

    public var isSupported: Bool { DCAppAttestService.shared.isSupported }

    public func generateKey() async throws -> String {
        try await withCheckedThrowingContinuation { continuation in
            DCAppAttestService.shared.generateKey { keyID, error in
                if let keyID { continuation.resume(returning: keyID) } else { continuation.resume(throwing: error ?? DCError(.unknownSystemFailure)) }
            }
        }
    }

    public func attestKey(_ keyID: String, clientDataHash: Data) async throws -> Data {
        try await withCheckedThrowingContinuation { continuation in
            DCAppAttestService.shared.attestKey(keyID, clientDataHash: clientDataHash) { attestation, error in
                if let attestation {
                    continuation.resume(returning: attestation)
                } else {
                    continuation.resume(throwing: error ?? DCError(.unknownSystemFailure))
                }
            }
        }
    }

    public func generateAssertion(_ keyID: String, clientDataHash: Data) async throws -> Data {
        try await withCheckedThrowingContinuation { continuation in
            DCAppAttestService.shared.generateAssertion(keyID, clientDataHash: clientDataHash) { assertion, error in
                if let assertion {
                    continuation.resume(returning: assertion)
                } else {
                    continuation.resume(throwing: error ?? DCError(.unknownSystemFailure))
                }
            }
        }
    }
}
#endif

/// The device's App Attest key across token requests: attested once over a challenge's nonce, then
/// asserting over each later nonce (Apple limits attestations; an assertion costs nothing).
actor AppAttestKeyring {
    let service: any AppAttestKeyService
    private(set) var keyID: String?
    private var attested: Bool

    /// - Parameter keyID: a key attested in an earlier run, which the app kept (Gatehouse keeps its
    ///   public key); nil to make one at the first challenge that asks.
    init(service: any AppAttestKeyService, keyID: String?) {
        self.service = service
        self.keyID = keyID
        attested = keyID != nil
    }

    /// The token request's proof fields for `nonce`: an assertion by the attested key, or a new
    /// key's attestation.
    func proof(nonce: String) async throws -> HardwareProof {
        let clientDataHash = Data(SHA256.hash(data: Data(nonce.utf8)))
        if attested, let keyID {
            let assertion = try await service.generateAssertion(keyID, clientDataHash: clientDataHash)
            return HardwareProof(nonce: nonce, keyID: keyID, attestation: nil, assertion: assertion.base64EncodedString())
        }
        let keyID: String
        if let existing = self.keyID { keyID = existing } else { keyID = try await service.generateKey() }
        self.keyID = keyID
        let attestation = try await service.attestKey(keyID, clientDataHash: clientDataHash)
        return HardwareProof(nonce: nonce, keyID: keyID, attestation: attestation.base64EncodedString(), assertion: nil)
    }

    /// The server took the proof: later requests assert.
    func accepted() { attested = true }

    /// The server no longer stands for the key (its attester changed, or the key is unknown): a new
    /// key is made and attested next time.
    func discard() {
        keyID = nil
        attested = false
    }
}

/// What the token call carries for a hardware attester: the key's attestation the first time, an
/// assertion after the server took it.
struct HardwareProof: Sendable {
    let nonce: String
    let keyID: String
    let attestation: String?
    let assertion: String?

    func apply(to request: inout Components.Schemas.AttestTokenRequest) {
        request.nonce = nonce
        request.keyId = keyID
        request.attestation = attestation
        request.assertion = assertion
    }
}
