import Foundation
import Synchronization

/// ES256 attestation tokens this instance has verified, with their claims and the key they verified
/// under, by their text. A token opens every request of a device's session until it expires, so the
/// gate parses it and checks its signature (the most expensive steps of a verification,
/// docs/PERFORMANCE.md) once per token and instance instead of on every request. Found by its text,
/// a token is not parsed at all: the text is the signed bytes, so the same text verifies under the
/// same key. Everything that depends on the request (audience, attester, binding, expiry, use limits)
/// is still checked each time, and the key must still be trusted, with the same bytes, so a key that
/// stops being trusted stops its tokens.
public final class VerifiedTokens: Sendable {
    /// About a kilobyte each (the token's text and its claims): the bound keeps a flood of distinct
    /// tokens, each of which took an attestation to get, to about ten megabytes.
    public static let standardCapacity = 10_000

    struct Remembered: Sendable {
        let kid: String
        let keyBytes: [UInt8]
        let claims: AttestationClaims

        /// Whether `keys` still trust the key the token verified under: its kid, with the same bytes.
        func holds(under keys: AttestationVerificationKeys) -> Bool {
            keys.published[kid]?.bytes == keyBytes
        }
    }

    private let entries = Mutex([String: Remembered]())
    private let capacity: Int

    public init(capacity: Int = standardCapacity) {
        self.capacity = capacity
    }

    func remembered(_ token: String) -> Remembered? {
        entries.withLock { $0[token] }
    }

    /// Past capacity, tokens that expired are let go first, then all of them.
    func remember(_ claims: AttestationClaims, token: String, kid: String, key: PublishedKey, at now: Date) {
        entries.withLock { entries in
            if entries.count >= capacity, entries[token] == nil {
                entries = entries.filter { $0.value.claims.expiresAt > now }
                if entries.count >= capacity { entries.removeAll(keepingCapacity: true) }
            }
            entries[token] = Remembered(kid: kid, keyBytes: key.bytes, claims: claims)
        }
    }
}

extension AttestationToken {
    /// A token this instance has verified before, checked with no I/O and without parsing it: nil when
    /// it is not remembered or `keys` no longer trust the key it verified under (`verify` then decides).
    public static func verifyRemembered(
        _ token: String,
        appKey: AppKey,
        attestID: AttestID?,
        boundValue: String?,
        requireBinding: Bool,
        at now: Date,
        verified: VerifiedTokens,
        trusting keys: (_ kid: String) -> AttestationVerificationKeys
    ) -> Result<AttestationClaims, AttestationTokenFailure>? {
        guard let remembered = verified.remembered(token), remembered.holds(under: keys(remembered.kid)) else { return nil }
        return check(remembered.claims, appKey: appKey, attestID: attestID, boundValue: boundValue, requireBinding: requireBinding, at: now)
    }
}
