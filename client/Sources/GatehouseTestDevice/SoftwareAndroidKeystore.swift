import Crypto
import CryptoExtras
import Foundation
import SwiftASN1
import X509

/// Android's keystore in software, for tests where no TEE is: it generates a key with an attestation
/// challenge and returns the chain with the key description (OID 1.3.6.1.4.1.11129.2.1.17) that a
/// TEE or StrongBox writes, under a root of its own; then signs with the key. `Properties` says what
/// the "hardware" reports, so tests can make the devices a verifier must refuse.
public final class SoftwareAndroidKeystore: @unchecked Sendable {
    public var root: Certificate { authority.root }
    private let authority: SoftwareCA
    private let lock = NSLock()
    private var keys: [String: Key] = [:]

    private enum Key {
        case ecdsa(P256.Signing.PrivateKey)
        case rsa(_RSA.Signing.PrivateKey)
    }

    public enum Algorithm: Sendable { case ecdsa, rsa }

    /// What the key description says. Levels: 0 software, 1 TEE, 2 StrongBox; boot states: 0 verified,
    /// 1 self-signed, 2 unverified, 3 failed.
    public struct Properties: Sendable {
        public var securityLevel = 1
        public var verifiedBootState = 0
        public var deviceLocked = true
        public var osPatchLevel = 202_510
        public var packageName = "com.example.shop"
        public var signingDigest = [UInt8](repeating: 0xAB, count: 32)
        public var validity: ClosedRange<Date>?

        public init() {}
    }

    public init() throws {
        authority = try SoftwareCA(name: "Software Android Attestation")
    }

    /// Generates a key attested with `challenge`; returns its handle and the chain, leaf first, as DER.
    public func generateKey(
        challenge: [UInt8],
        algorithm: Algorithm = .ecdsa,
        properties: Properties = Properties()
    ) throws -> (
        handle: String, chain: [[UInt8]]
    ) {
        let key: Key
        let publicKey: Certificate.PublicKey
        switch algorithm {
        case .ecdsa:
            let ecdsa = P256.Signing.PrivateKey()
            (key, publicKey) = (.ecdsa(ecdsa), Certificate.PublicKey(ecdsa.publicKey))
        case .rsa:
            let rsa = try _RSA.Signing.PrivateKey(keySize: .bits2048)
            (key, publicKey) = (.rsa(rsa), Certificate.PublicKey(rsa.publicKey))
        }
        let handle = UUID().uuidString
        lock.withLock { keys[handle] = key }
        let description = try Self.keyDescription(challenge: challenge, properties: properties)
        let leaf = try authority.leaf(
            for: publicKey,
            subject: "Android Keystore Key",
            validity: properties.validity,
            extensions: try Certificate.Extensions {
                Certificate.Extension(oid: [1, 3, 6, 1, 4, 1, 11129, 2, 1, 17], critical: false, value: description[...])
            }
        )
        return (handle, try authority.chain(leaf))
    }

    /// Signs `data` with the key: ECDSA P-256 (DER) or RSA PKCS #1 v1.5, both over SHA-256.
    public func sign(_ handle: String, _ data: Data) throws -> Data {
        guard let key = lock.withLock({ keys[handle] }) else { throw SoftwareDeviceError.unknownKey }
        switch key {
        case .ecdsa(let ecdsa): return try ecdsa.signature(for: data).derRepresentation
        case .rsa(let rsa): return try rsa.signature(for: data, padding: .insecurePKCS1v1_5).rawRepresentation
        }
    }

    /// KeyDescription with the fields a verifier reads (attestation version 200, KeyMint 200).
    private static func keyDescription(challenge: [UInt8], properties: Properties) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { description in
            for _ in 0..<2 {
                try description.serialize(200)
                try properties.securityLevel.serialize(into: &description, withIdentifier: .enumerated)
            }
            try description.serialize(ASN1OctetString(contentBytes: challenge[...]))
            try description.serialize(ASN1OctetString(contentBytes: []))
            try description.appendConstructedNode(identifier: .sequence) { software in
                try software.appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: 709, tagClass: .contextSpecific)) { tagged in
                    try tagged.serialize(ASN1OctetString(contentBytes: try applicationID(properties)[...]))
                }
            }
            try description.appendConstructedNode(identifier: .sequence) { hardware in
                try hardware.appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: 704, tagClass: .contextSpecific)) { tagged in
                    try tagged.appendConstructedNode(identifier: .sequence) { root in
                        try root.serialize(ASN1OctetString(contentBytes: [UInt8](repeating: 1, count: 32)[...]))
                        try root.serialize(properties.deviceLocked)
                        try properties.verifiedBootState.serialize(into: &root, withIdentifier: .enumerated)
                        try root.serialize(ASN1OctetString(contentBytes: [UInt8](repeating: 2, count: 32)[...]))
                    }
                }
                try hardware.appendConstructedNode(identifier: ASN1Identifier(tagWithNumber: 706, tagClass: .contextSpecific)) { tagged in
                    try tagged.serialize(properties.osPatchLevel)
                }
            }
        }
        return serializer.serializedBytes
    }

    /// AttestationApplicationId: one package (version 1) and one signing digest.
    private static func applicationID(_ properties: Properties) throws -> [UInt8] {
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { application in
            try application.appendConstructedNode(identifier: .set) { packages in
                try packages.appendConstructedNode(identifier: .sequence) { package in
                    try package.serialize(ASN1OctetString(contentBytes: Array(properties.packageName.utf8)[...]))
                    try package.serialize(1)
                }
            }
            try application.appendConstructedNode(identifier: .set) { digests in
                try digests.serialize(ASN1OctetString(contentBytes: properties.signingDigest[...]))
            }
        }
        return serializer.serializedBytes
    }
}
