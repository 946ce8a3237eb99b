import Crypto
import Foundation
import Synchronization

/// ES256 attestation tokens this instance has verified, with their claims, by a digest of the token
/// and the public key it verified under. A token opens every request of a device's session until it
/// expires, so the gate pays for its signature check (the most expensive step of a verification,
/// docs/PERFORMANCE.md) once per token and instance instead of on every request. Everything that
/// depends on the request (audience, attester, binding, expiry, use limits) is still checked each
/// time, and a key that stops being trusted is no longer looked up, so its tokens stop verifying.
public final class VerifiedTokens: Sendable {
    /// About half a kilobyte each: the bound keeps a flood of distinct tokens to a few megabytes.
    public static let standardCapacity = 10_000

    private let entries = Mutex([SHA256Digest: AttestationClaims]())
    private let capacity: Int

    public init(capacity: Int = standardCapacity) {
        self.capacity = capacity
    }

    static func digest(of token: String, key: P256.Signing.PublicKey) -> SHA256Digest {
        var hash = SHA256()
        hash.update(data: key.rawRepresentation)
        hash.update(data: Array(token.utf8))
        return hash.finalize()
    }

    func claims(for digest: SHA256Digest) -> AttestationClaims? {
        entries.withLock { $0[digest] }
    }

    /// Past capacity, tokens that expired are let go first, then all of them.
    func remember(_ claims: AttestationClaims, for digest: SHA256Digest, at now: Date) {
        entries.withLock { entries in
            if entries.count >= capacity {
                entries = entries.filter { $0.value.expiresAt > now }
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            }
            entries[digest] = claims
        }
    }
}
