import Crypto

/// What a credential Gatehouse never reads back is stored and compared as: its SHA-256. Admin tokens,
/// console session cookies and server secrets are all random (128 bits and more), so a plain hash
/// resists guessing as well as a keyed one would, and leaves no key to keep or rotate. Compare
/// digests in constant time.
public enum CredentialDigest {
    public static func of(_ plaintext: String) -> [UInt8] {
        Array(SHA256.hash(data: Array(plaintext.utf8)))
    }
}
