import Crypto
import Foundation
import SwiftASN1
import X509

/// What an `appAttest` attester accepts: the app's team, its bundle identifiers, and the environment
/// whose AAGUID the attestation must carry.
public struct AppAttestPolicy: Equatable, Sendable {
    public let teamID: String
    public let bundleIDs: [String]
    public let environment: AppAttestEnvironment

    public init(teamID: String, bundleIDs: [String], environment: AppAttestEnvironment) {
        self.teamID = teamID
        self.bundleIDs = bundleIDs
        self.environment = environment
    }

    /// The bundle whose App ID (`teamID.bundleID`) hashes to `relyingPartyHash`.
    func bundle(hashingTo relyingPartyHash: [UInt8]) -> String? {
        bundleIDs.first { Array(SHA256.hash(data: Data("\(teamID).\($0)".utf8))) == relyingPartyHash }
    }
}

public enum AppAttestEnvironment: String, Equatable, Sendable, Codable, CaseIterable {
    case production, development

    /// The AAGUID Apple's attestation service puts in the authenticator data.
    public var aaguid: [UInt8] {
        switch self {
        case .production: Array("appattest".utf8) + [UInt8](repeating: 0, count: 7)
        case .development: Array("appattestdevelop".utf8)
        }
    }
}

/// A key App Attest vouched for: what Gatehouse stores to check the device's later assertions.
public struct AppAttestKey: Equatable, Sendable {
    /// SHA-256 of the public key, as the device names it.
    public let keyID: [UInt8]
    /// The P-256 public key, X9.63 uncompressed.
    public let publicKey: [UInt8]
    public let bundleID: String
    /// Apple's receipt, for an operator who later asks Apple for the device's risk metric.
    public let receipt: [UInt8]
    public let counter: UInt32
}

/// Apple App Attest, verified offline as Apple's "Validating apps that connect to your server" says.
public enum AppAttest {
    /// Attestation objects are about 5.5 KiB with their receipt.
    public static let maximumObjectBytes = 16_384
    static let nonceExtension: ASN1ObjectIdentifier = [1, 2, 840, 113_635, 100, 8, 2]

    /// Verifies an attestation object made for `clientDataHash` (SHA-256 of the client data that holds
    /// the server's nonce) by the key `keyID`, against `roots` (Apple's App Attestation Root CA) at `time`.
    public static func verifyAttestation(
        _ object: [UInt8],
        keyID: [UInt8],
        clientDataHash: [UInt8],
        policy: AppAttestPolicy,
        roots: [Certificate],
        at time: Date
    ) async throws(DomainError) -> AppAttestKey {
        let statement = try AttestationStatement(object)
        let chain = try await AttestationChain.verify(statement.certificates, roots: roots, at: time)
        let nonce = Array(SHA256.hash(data: Data(statement.authenticatorData + clientDataHash)))
        guard try nonceInCertificate(chain[0]) == nonce else {
            throw DomainError(.attestationNonceMismatch, "The attestation was not made over this challenge's client data.")
        }
        guard let publicKey = P256.Signing.PublicKey(chain[0].publicKey)?.x963Representation else {
            throw DomainError(.malformedAttestation, "The attested key is not a P-256 key.")
        }
        let authenticator = try AuthenticatorData(statement.authenticatorData, readingCredential: true)
        guard Array(SHA256.hash(data: publicKey)) == keyID, authenticator.credential?.credentialID == keyID else {
            throw DomainError(.attestationKeyMismatch, "The key id is not the attested key's.")
        }
        guard let bundleID = policy.bundle(hashingTo: authenticator.relyingPartyHash) else {
            throw DomainError(.attestationAppMismatch, "The attestation is for another app than this attester's team and bundles.")
        }
        guard authenticator.counter == 0 else { throw DomainError(.attestationCounterInvalid, "A new key's counter must be 0.") }
        guard authenticator.credential?.aaguid == policy.environment.aaguid else {
            throw DomainError(.attestationEnvironmentMismatch, "The attestation is not from the \(policy.environment.rawValue) environment.")
        }
        return AppAttestKey(keyID: keyID, publicKey: Array(publicKey), bundleID: bundleID, receipt: statement.receipt, counter: 0)
    }

    /// Verifies an assertion by `key` over `clientDataHash`, and returns its counter, which must be
    /// greater than `previousCounter` (the caller stores it only if no other assertion stored it first).
    public static func verifyAssertion(
        _ assertion: [UInt8],
        clientDataHash: [UInt8],
        key: AppAttestKey,
        policy: AppAttestPolicy,
        previousCounter: UInt32
    ) throws(DomainError) -> UInt32 {
        guard assertion.count <= maximumObjectBytes, let object = try? CBORValue.decode(assertion),
            let signatureBytes = object["signature"]?.byteString, let authenticatorBytes = object["authenticatorData"]?.byteString
        else { throw DomainError(.malformedAttestation, "The assertion is not a CBOR map of signature and authenticatorData.") }
        let authenticator = try AuthenticatorData(authenticatorBytes, readingCredential: false)
        let nonce = Data(SHA256.hash(data: Data(authenticatorBytes + clientDataHash)))
        guard let publicKey = try? P256.Signing.PublicKey(x963Representation: key.publicKey),
            let signature = try? P256.Signing.ECDSASignature(derRepresentation: signatureBytes),
            publicKey.isValidSignature(signature, for: nonce)
        else { throw DomainError(.invalidAssertionSignature, "The assertion is not signed by the attested key.") }
        guard policy.bundle(hashingTo: authenticator.relyingPartyHash) == key.bundleID else {
            throw DomainError(.attestationAppMismatch, "The assertion is for another app than the attested key's.")
        }
        guard authenticator.counter > previousCounter else {
            throw DomainError(.attestationCounterInvalid, "The assertion's counter does not increase; it was replayed.")
        }
        return authenticator.counter
    }

    /// The nonce extension: SEQUENCE { [1] EXPLICIT OCTET STRING }.
    private static func nonceInCertificate(_ leaf: Certificate) throws(DomainError) -> [UInt8] {
        guard let value = leaf.extensions.first(where: { $0.oid == nonceExtension })?.value,
            let nonce = try? DER.sequence(
                try DER.parse(value),
                identifier: .sequence,
                { nodes in
                    try DER.explicitlyTagged(&nodes, tagNumber: 1, tagClass: .contextSpecific) { try ASN1OctetString(derEncoded: $0) }
                }
            )
        else { throw DomainError(.malformedAttestation, "The leaf certificate carries no App Attest nonce.") }
        return Array(nonce.bytes)
    }
}

/// An attestation object's parts: `fmt` must be `apple-appattest`, `attStmt` holds `x5c` and `receipt`.
struct AttestationStatement {
    let certificates: [[UInt8]]
    let receipt: [UInt8]
    let authenticatorData: [UInt8]

    init(_ object: [UInt8]) throws(DomainError) {
        guard object.count <= AppAttest.maximumObjectBytes else {
            throw DomainError(.malformedAttestation, "The attestation object is larger than \(AppAttest.maximumObjectBytes) bytes.")
        }
        let decoded: CBORValue
        do { decoded = try CBORValue.decode(object) } catch {
            throw DomainError(.malformedAttestation, "The attestation object is not well-formed CBOR (\(error)).")
        }
        guard decoded["fmt"] == .text("apple-appattest"), let statement = decoded["attStmt"],
            let certificates = statement["x5c"]?.arrayItems?.compactMap(\.byteString),
            certificates.count == statement["x5c"]?.arrayItems?.count,
            let receipt = statement["receipt"]?.byteString, let authenticatorData = decoded["authData"]?.byteString
        else { throw DomainError(.malformedAttestation, "The attestation object lacks fmt, attStmt.x5c, attStmt.receipt or authData.") }
        self.certificates = certificates
        self.receipt = receipt
        self.authenticatorData = authenticatorData
    }
}
