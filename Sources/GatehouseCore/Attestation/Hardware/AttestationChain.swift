import Foundation
import SwiftASN1
import X509

/// A device's certificate chain (App Attest's `x5c`, Android's attestation chain), leaf first, checked
/// against the platform's roots at one time with RFC 5280's rules (signatures, validity of every
/// certificate, CA constraints). swift-certificates builds and checks the path.
public enum AttestationChain {
    /// Apple sends two certificates, Android three to five; more is work an attacker chose.
    public static let certificateCount = 2...10
    /// Larger than any attestation certificate seen (Apple's leaf is under 1 KiB, Android's under 2 KiB).
    public static let certificateBytes = 8192

    /// The validated chain, leaf first and the root last; refused as `malformed_attestation` when a
    /// certificate does not parse, `untrusted_attestation_chain` when no path to a root is valid at `time`.
    public static func verify(_ encoded: [[UInt8]], roots: [Certificate], at time: Date) async throws(DomainError) -> [Certificate] {
        guard certificateCount.contains(encoded.count) else {
            throw DomainError(.malformedAttestation, "The certificate chain has \(encoded.count) certificates; 2 to 10 are accepted.")
        }
        var certificates: [Certificate] = []
        for der in encoded {
            guard der.count <= certificateBytes, let certificate = try? Certificate(derEncoded: der) else {
                throw DomainError(.malformedAttestation, "A certificate of the chain does not parse.")
            }
            certificates.append(certificate)
        }
        var verifier = Verifier(rootCertificates: CertificateStore(roots)) { RFC5280Policy(validationTime: time) }
        let result = await verifier.validate(leaf: certificates[0], intermediates: CertificateStore(certificates.dropFirst()))
        guard case .validCertificate(let chain) = result else {
            throw DomainError(
                .untrustedAttestationChain,
                "The certificate chain does not lead to a trusted root, or a certificate of it is not valid at this time."
            )
        }
        return Array(chain)
    }

    /// Certificates in PEM, for the roots a deployment trusts. Lines of any length are read: published
    /// roots (Google's among them) do not all keep to 64 characters.
    public static func certificates(pem: String) throws(DomainError) -> [Certificate] {
        var certificates: [Certificate] = []
        for der in try derBlocks(pem: pem) {
            guard let certificate = try? Certificate(derEncoded: der) else {
                throw DomainError(.malformedAttestation, "The trust anchors are not PEM certificates.")
            }
            certificates.append(certificate)
        }
        return certificates
    }

    /// The DER of each certificate block of a PEM text, unparsed (a chain as a device sent it: the
    /// verifier parses and refuses).
    public static func derBlocks(pem: String) throws(DomainError) -> [[UInt8]] {
        var blocks: [[UInt8]] = []
        for block in pem.components(separatedBy: "-----BEGIN CERTIFICATE-----").dropFirst() {
            guard let end = block.range(of: "-----END CERTIFICATE-----"),
                let der = Data(base64Encoded: String(block[..<end.lowerBound]), options: .ignoreUnknownCharacters)
            else { throw DomainError(.malformedAttestation, "A PEM certificate block is not base64 between its markers.") }
            blocks.append(Array(der))
        }
        guard !blocks.isEmpty else { throw DomainError(.malformedAttestation, "The PEM text holds no certificate.") }
        return blocks
    }
}
