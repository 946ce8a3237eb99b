/// WebAuthn authenticator data (W3C WebAuthn 6.1), the part App Attest signs: the relying party's
/// hash (SHA-256 of `teamID.bundleID`), flags, the signature counter, and in an attestation the
/// attested credential (AAGUID, key id).
public struct AuthenticatorData: Equatable, Sendable {
    public let relyingPartyHash: [UInt8]
    public let flags: UInt8
    public let counter: UInt32
    /// Read from an attestation's authenticator data; an assertion's has none (Apple's still sets the flag).
    public let credential: AttestedCredential?

    public struct AttestedCredential: Equatable, Sendable {
        public let aaguid: [UInt8]
        public let credentialID: [UInt8]
    }

    private static let attestedCredentialFlag: UInt8 = 0x40

    public init(_ bytes: [UInt8], readingCredential: Bool) throws(DomainError) {
        guard bytes.count >= 37 else { throw DomainError(.malformedAttestation, "The authenticator data is shorter than 37 bytes.") }
        relyingPartyHash = Array(bytes[0..<32])
        flags = bytes[32]
        counter = bytes[33..<37].reduce(0) { $0 << 8 | UInt32($1) }
        guard readingCredential, flags & Self.attestedCredentialFlag != 0 else {
            credential = nil
            return
        }
        // AAGUID (16), credential id length (2), credential id, then the COSE key, which App Attest
        // does not need: the key is the leaf certificate's.
        guard bytes.count >= 55 else { throw DomainError(.malformedAttestation, "The attested credential data is truncated.") }
        let length = Int(bytes[53]) << 8 | Int(bytes[54])
        guard bytes.count >= 55 + length else { throw DomainError(.malformedAttestation, "The credential id is truncated.") }
        credential = AttestedCredential(aaguid: Array(bytes[37..<53]), credentialID: Array(bytes[55..<(55 + length)]))
    }
}
