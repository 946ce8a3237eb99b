import Crypto
import Foundation

/// An app's own response keys from Play Console ("Manage my response encryption keys"), which let a
/// server read classic tokens without calling Google: an AES-256 key that decrypts the JWE and an EC
/// P-256 key that verifies the JWS inside it.
public struct PlayIntegrityKeys: Sendable {
    public let decryption: SymmetricKey
    public let verification: P256.Signing.PublicKey

    public init(decryption: SymmetricKey, verification: P256.Signing.PublicKey) {
        self.decryption = decryption
        self.verification = verification
    }

    /// The keys as Play Console hands them over: the decryption key as base64 of its 32 bytes, the
    /// verification key as base64 of its DER (SubjectPublicKeyInfo).
    public init(decryptionKey: String, verificationKey: String) throws(DomainError) {
        guard let secret = Data(base64Encoded: decryptionKey), secret.count == 32 else {
            throw DomainError(.invalidAttester, "The decryption key is base64 of 32 bytes (Play Console's AES key).", field: "decryptionKey")
        }
        guard let der = Data(base64Encoded: verificationKey), let key = try? P256.Signing.PublicKey(derRepresentation: der) else {
            throw DomainError(.invalidAttester, "The verification key is base64 of an EC P-256 public key's DER.", field: "verificationKey")
        }
        self.init(decryption: SymmetricKey(data: secret), verification: key)
    }
}

/// Classic Play Integrity tokens, verified offline: the JWE opened with the app's decryption key, the
/// JWS inside verified with its verification key (ES256 only), then the verdict judged by the policy.
public enum PlayIntegrityClassic {
    /// The verdict inside a token, or why the token is not one of the app's.
    public static func verdict(of token: String, keys: PlayIntegrityKeys) -> Result<PlayIntegrityVerdict, PlayIntegrityRefusal> {
        let signed: [UInt8]
        switch CompactJWE.decrypt(token, key: keys.decryption) {
        case .success(let plaintext): signed = plaintext
        case .failure(.undecryptable): return .failure(.undecryptable)
        case .failure: return .failure(.malformed)
        }
        guard case .success(let jws) = CompactJWS.parse(String(decoding: signed, as: UTF8.self)) else { return .failure(.malformed) }
        guard jws.algorithm == .es256, jws.isSigned(by: keys.verification) else { return .failure(.badSignature) }
        guard let verdict = PlayIntegrityVerdict.parse(jws.payload) else { return .failure(.malformed) }
        return .success(verdict)
    }

    /// A token checked against the challenge's nonce and the attester's policy.
    public static func verify(
        _ token: String,
        keys: PlayIntegrityKeys,
        policy: PlayIntegrityPolicy,
        nonce: String,
        at now: Date
    ) -> Result<PlayIntegrityFacts, PlayIntegrityRefusal> {
        verdict(of: token, keys: keys).flatMap { policy.judge($0, expected: .nonce(nonce), at: now) }
    }
}
