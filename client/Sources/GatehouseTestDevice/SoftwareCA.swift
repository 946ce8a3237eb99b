import Crypto
import Foundation
import SwiftASN1
import X509

/// A root and an intermediate made for one test run, never a vendor's: the software devices issue
/// their attestation certificates under it, and only a test-only configuration trusts `root`.
public struct SoftwareCA: Sendable {
    public let root: Certificate
    let intermediate: Certificate
    let intermediateKey: P256.Signing.PrivateKey

    public init(name: String) throws {
        let rootKey = P256.Signing.PrivateKey()
        let rootName = try DistinguishedName { CommonName("\(name) Root") }
        root = try Self.authority(key: rootKey.publicKey, subject: rootName, issuer: rootName, signer: rootKey, pathLength: nil)
        intermediateKey = P256.Signing.PrivateKey()
        intermediate = try Self.authority(
            key: intermediateKey.publicKey,
            subject: try DistinguishedName { CommonName("\(name) CA 1") },
            issuer: rootName,
            signer: rootKey,
            pathLength: 0
        )
    }

    private static func authority(
        key: P256.Signing.PublicKey,
        subject: DistinguishedName,
        issuer: DistinguishedName,
        signer: P256.Signing.PrivateKey,
        pathLength: Int?
    ) throws -> Certificate {
        let now = Date()
        return try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key),
            notValidBefore: now - 86_400,
            notValidAfter: now + 86_400 * 365,
            issuer: issuer,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: pathLength))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: Certificate.PrivateKey(signer)
        )
    }

    /// A leaf for `key` under the intermediate, carrying `extensions`.
    func leaf(
        for key: Certificate.PublicKey,
        subject: String,
        validity: ClosedRange<Date>?,
        extensions: Certificate.Extensions
    ) throws -> Certificate {
        let now = Date()
        return try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: key,
            notValidBefore: validity?.lowerBound ?? now - 3600,
            notValidAfter: validity?.upperBound ?? now + 86_400 * 3,
            issuer: intermediate.subject,
            subject: try DistinguishedName { CommonName(subject) },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: extensions,
            issuerPrivateKey: Certificate.PrivateKey(intermediateKey)
        )
    }

    /// The chain a device sends, leaf first: the leaf and the intermediate, as DER.
    func chain(_ leaf: Certificate) throws -> [[UInt8]] {
        try [leaf, intermediate].map { certificate in
            var serializer = DER.Serializer()
            try serializer.serialize(certificate)
            return serializer.serializedBytes
        }
    }
}
