import Crypto
import Foundation
import X509

/// A root certificate made for one test run, never a vendor's: refusals need chains to roots nobody
/// trusts, and the software test device needs a root a test-only configuration trusts.
struct ThrowawayRoot {
    let key = P256.Signing.PrivateKey()
    let certificate: Certificate

    init(name: String = "Gatehouse throwaway test root") throws {
        let subject = try DistinguishedName { CommonName(name) }
        let now = Date()
        certificate = try Certificate(
            version: .v3,
            serialNumber: Certificate.SerialNumber(),
            publicKey: Certificate.PublicKey(key.publicKey),
            notValidBefore: now - 3600,
            notValidAfter: now + 86_400 * 365,
            issuer: subject,
            subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true))
            },
            issuerPrivateKey: Certificate.PrivateKey(key)
        )
    }
}
