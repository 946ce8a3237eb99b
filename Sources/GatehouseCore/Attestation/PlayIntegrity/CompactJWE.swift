import Crypto
import Foundation

/// A compact JWE as Play Integrity's classic tokens are (RFC 7516 section 7.1): a protected header, the
/// content key wrapped with the app's AES-256 key (A256KW, RFC 3394), a 96-bit IV, the ciphertext and a
/// 128-bit tag (A256GCM, with the header's base64url text as additional data). No Swift package among
/// the local copies reads JWE; swift-crypto has AES key wrap and AES-GCM, and this only composes them.
/// tests/interop/play_integrity_interop.py checks it against joserfc in both directions.
public enum CompactJWE {
    /// Play's tokens are a few kilobytes; this bounds the work of a token built to be large.
    public static let maximumLength = 16_384

    public enum Failure: String, Error, Sendable {
        case malformed
        /// Anything but A256KW with A256GCM, a `zip` (a compressed payload can expand without bound)
        /// or a `crit` header.
        case unsupportedAlgorithm = "unsupported_algorithm"
        /// The key does not unwrap, or the tag does not authenticate.
        case undecryptable
    }

    /// The plaintext, when `key` unwraps the content key and the tag authenticates header and ciphertext.
    public static func decrypt(_ text: String, key: SymmetricKey) -> Result<[UInt8], Failure> {
        let utf8 = Array(text.utf8)
        guard utf8.count <= maximumLength else { return .failure(.malformed) }
        let parts = utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 5, let headerBytes = Base64URL.decode(bytes: parts[0]), let header = JSONValue.parse(headerBytes)?.object,
            let wrapped = Base64URL.decode(bytes: parts[1]), let iv = Base64URL.decode(bytes: parts[2]),
            let ciphertext = Base64URL.decode(bytes: parts[3]), let tag = Base64URL.decode(bytes: parts[4])
        else { return .failure(.malformed) }
        guard header["alg"]?.string == "A256KW", header["enc"]?.string == "A256GCM", header["zip"] == nil, header["crit"] == nil else {
            return .failure(.unsupportedAlgorithm)
        }
        guard wrapped.count == 40, iv.count == 12, tag.count == 16 else { return .failure(.malformed) }
        guard let contentKey = try? AES.KeyWrap.unwrap(wrapped, using: key), contentKey.bitCount == 256,
            let nonce = try? AES.GCM.Nonce(data: iv),
            let box = try? AES.GCM.SealedBox(nonce: nonce, ciphertext: ciphertext, tag: tag),
            let plaintext = try? AES.GCM.open(box, using: contentKey, authenticating: Array(parts[0]))
        else { return .failure(.undecryptable) }
        return .success(Array(plaintext))
    }

    /// A token as Play builds one, for the tests' device (`PlayIntegrityTests`, whose tokens joserfc must
    /// open): a fresh content key and IV for each. Nil when `key` is no AES key (16, 24 or 32 bytes).
    public static func encrypt(_ plaintext: [UInt8], key: SymmetricKey) -> String? {
        let header = Base64URL.encode(Array(#"{"alg":"A256KW","enc":"A256GCM"}"#.utf8))
        let contentKey = SymmetricKey(size: .bits256)
        guard let wrapped = try? AES.KeyWrap.wrap(contentKey, using: key),
            let sealed = try? AES.GCM.seal(plaintext, using: contentKey, nonce: AES.GCM.Nonce(), authenticating: Array(header.utf8))
        else { return nil }
        return [header, Base64URL.encode(wrapped), Base64URL.encode(sealed.nonce), Base64URL.encode(sealed.ciphertext), Base64URL.encode(sealed.tag)]
            .joined(separator: ".")
    }
}
