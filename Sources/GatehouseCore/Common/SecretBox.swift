import Crypto
import Foundation

/// Seals secrets that Gatehouse must read back (app secrets, later upstream keys) with the master key.
/// AES-256-GCM; the associated data names the row a ciphertext belongs to, so a sealed value copied into
/// another row does not open.
public struct SecretBox: Sendable {
    private static let formatVersion: UInt8 = 1
    private static let checkPlaintext = Array("gatehouse master key check".utf8)
    private static let checkContext = "master-key-check"

    private let key: SymmetricKey

    /// - Parameter masterKey: exactly 32 bytes.
    public init(masterKey: [UInt8]) throws(DomainError) {
        guard masterKey.count == 32 else {
            throw DomainError(.masterKeyInvalid, "The master key must be 32 bytes (base64 of 32 random bytes).")
        }
        self.key = SymmetricKey(data: masterKey)
    }

    /// Parses the base64 form used in `GATEHOUSE_MASTER_KEY` and key files (whitespace around it ignored).
    public init(base64MasterKey text: String) throws(DomainError) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard let bytes = Data(base64Encoded: trimmed) else {
            throw DomainError(.masterKeyInvalid, "The master key is not valid base64.")
        }
        try self.init(masterKey: Array(bytes))
    }

    /// 32 fresh random bytes, base64: what `gatehouse` writes for a development master key.
    public static func generateBase64MasterKey() -> String {
        SymmetricKey(size: .bits256).withUnsafeBytes { Data($0).base64EncodedString() }
    }

    public func seal(_ plaintext: [UInt8], context: String) -> [UInt8] {
        // AES.GCM.seal only throws for an invalid nonce or key size, neither of which can happen here.
        guard let box = try? AES.GCM.seal(plaintext, using: key, authenticating: Array(context.utf8)),
            let combined = box.combined
        else {
            preconditionFailure("AES-GCM sealing with a 256-bit key and a random nonce cannot fail")
        }
        return [Self.formatVersion] + Array(combined)
    }

    public func open(_ sealed: [UInt8], context: String) throws(DomainError) -> [UInt8] {
        guard sealed.first == Self.formatVersion,
            let box = try? AES.GCM.SealedBox(combined: sealed.dropFirst()),
            let plaintext = try? AES.GCM.open(box, using: key, authenticating: Array(context.utf8))
        else {
            throw DomainError(.sealedSecretUnreadable, "A sealed secret does not open with this master key.")
        }
        return Array(plaintext)
    }

    /// A key for one purpose (ztoken MACs, device identities, ...), derived from the master key with
    /// HKDF-SHA256, so every instance derives the same keys and no further key needs storing.
    public func derivedKey(purpose: String) -> SymmetricKey {
        HKDF<SHA256>.deriveKey(inputKeyMaterial: key, info: Array("gatehouse:\(purpose)".utf8), outputByteCount: 32)
    }

    /// Whether both boxes hold the same key (compared without leaking timing).
    public func hasSameKey(as other: SecretBox) -> Bool {
        key.withUnsafeBytes { mine in other.key.withUnsafeBytes { theirs in constantTimeEquals(Array(mine), Array(theirs)) } }
    }

    /// A sealed known value stored once per database, so that starting with the wrong master key fails
    /// loudly at start instead of at the first secret read.
    public func makeKeyCheck() -> [UInt8] {
        seal(Self.checkPlaintext, context: Self.checkContext)
    }

    public func verifyKeyCheck(_ sealed: [UInt8]) throws(DomainError) {
        guard (try? open(sealed, context: Self.checkContext)) == Self.checkPlaintext else {
            throw DomainError(.masterKeyInvalid, "The master key does not match the one this database was created with.")
        }
    }
}

/// Compares secrets without leaking, through timing, how long a common prefix is.
public func constantTimeEquals(_ lhs: some Collection<UInt8>, _ rhs: some Collection<UInt8>) -> Bool {
    guard lhs.count == rhs.count else { return false }
    var difference: UInt8 = 0
    for (a, b) in zip(lhs, rhs) { difference |= a ^ b }
    return difference == 0
}
