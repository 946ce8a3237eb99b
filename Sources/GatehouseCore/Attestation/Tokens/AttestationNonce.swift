import Crypto
import Foundation

/// The single-use server nonce a device's hardware signs: in App Attest's client data (whose SHA-256
/// is the `clientDataHash`), as Android's attestation challenge, and in every assertion.
///
/// It carries its own proof (an HMAC under a key only this server derives, over the attester, the
/// device, 16 random bytes and the expiry), so issuing one writes nothing: the store sees a nonce
/// only when it is spent (`replayKey`, once). Base64url of 40 bytes: 54 characters, within
/// Android's 128-byte challenge limit.
public enum AttestationNonce {
    static let randomCount = 16
    static let tagCount = 16
    public static let textLength = 54

    public static func issue<R: RandomNumberGenerator>(
        binding: PowBinding,
        expiresAt: Date,
        key: SymmetricKey,
        using generator: inout R
    ) -> String {
        let random = Altcha.randomBytes(randomCount, using: &generator)
        let expiry = UInt64(max(0, expiresAt.timeIntervalSince1970.rounded(.down)))
        let body = random + withUnsafeBytes(of: expiry.bigEndian, Array.init)
        return Base64URL.encode(body + tag(body, binding: binding, key: key))
    }

    /// The nonce's spending key and expiry, if this server issued it for this attester and device and
    /// it is still alive. The caller spends `replayKey` before trusting anything signed over it.
    public static func claim(
        _ text: String,
        binding: PowBinding,
        key: SymmetricKey,
        at now: Date
    ) throws(DomainError) -> (
        replayKey: String, expiresAt: Date
    ) {
        guard text.utf8.count == textLength, let bytes = Base64URL.decode(text), bytes.count == randomCount + 8 + tagCount else {
            throw DomainError(.attestationNonceMismatch, "nonce is not a challenge's nonce.", field: "nonce")
        }
        let body = Array(bytes[..<(randomCount + 8)])
        guard constantTimeEquals(tag(body, binding: binding, key: key), Array(bytes[(randomCount + 8)...])) else {
            throw DomainError(.attestationNonceMismatch, "nonce was not issued for this attester and device.", field: "nonce")
        }
        let expiry = body[randomCount...].reduce(UInt64(0)) { $0 << 8 | UInt64($1) }
        let expiresAt = Date(timeIntervalSince1970: TimeInterval(expiry))
        guard now < expiresAt else {
            throw DomainError(.attestationNonceMismatch, "nonce expired; fetch a new challenge.", field: "nonce")
        }
        return ("nonce:" + text, expiresAt)
    }

    private static func tag(_ body: [UInt8], binding: PowBinding, key: SymmetricKey) -> [UInt8] {
        var mac = HMAC<SHA256>(key: key)
        mac.update(data: Array("gatehouse-attestation-nonce-v1\u{0}\(binding.attestID)\u{0}\(binding.deviceID)\u{0}".utf8))
        mac.update(data: body)
        return Array(Array(mac.finalize())[..<tagCount])
    }
}
