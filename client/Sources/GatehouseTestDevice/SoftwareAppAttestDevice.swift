import Crypto
import Foundation
import GatehouseClient
import SwiftASN1
import X509

/// App Attest in software, for tests where no Secure Enclave is (Linux, CI): it makes keys, attests
/// them with a chain to a root of its own, and signs assertions, in the formats Apple's service and
/// `DCAppAttestService` use. A server trusts it only where a test-only configuration adds `root`;
/// `Tampering` makes the attestations a verifier must refuse.
public final class SoftwareAppAttestDevice: @unchecked Sendable {
    public var root: Certificate { authority.root }
    public let teamID: String
    public let bundleID: String
    public let development: Bool
    private let authority: SoftwareCA
    private let lock = NSLock()
    private var keys: [String: (key: P256.Signing.PrivateKey, counter: UInt32)] = [:]

    /// What to get wrong in an attestation.
    public struct Tampering: Sendable {
        public var counter: UInt32 = 0
        public var aaguid: [UInt8]?
        public var credentialID: [UInt8]?
        public var nonce: [UInt8]?
        public var leafValidity: ClosedRange<Date>?
        public var bundleID: String?

        public init() {}
    }

    public init(teamID: String, bundleID: String, development: Bool = true) throws {
        self.teamID = teamID
        self.bundleID = bundleID
        self.development = development
        authority = try SoftwareCA(name: "Software App Attestation")
    }

    /// `DCAppAttestService.generateKey`: the key id, base64 of SHA-256 of the public key.
    public func generateKey() -> String {
        let key = P256.Signing.PrivateKey()
        let keyID = Data(SHA256.hash(data: key.publicKey.x963Representation)).base64EncodedString()
        lock.withLock { keys[keyID] = (key, 0) }
        return keyID
    }

    /// `DCAppAttestService.attestKey`: the attestation object for `clientDataHash`.
    public func attestKey(_ keyID: String, clientDataHash: Data, tampering: Tampering) throws -> Data {
        guard let key = lock.withLock({ keys[keyID]?.key }), let keyIDBytes = Data(base64Encoded: keyID) else {
            throw SoftwareDeviceError.unknownKey
        }
        let aaguid = tampering.aaguid ?? (development ? Array("appattestdevelop".utf8) : Array("appattest".utf8) + Array(repeating: 0, count: 7))
        let credentialID = tampering.credentialID ?? Array(keyIDBytes)
        let authenticatorData =
            relyingPartyHash(tampering.bundleID) + [0x40] + bigEndian(tampering.counter) + aaguid
            + bigEndian(UInt16(credentialID.count)) + credentialID + coseKey(key.publicKey)
        let nonce = tampering.nonce ?? Array(SHA256.hash(data: Data(authenticatorData) + clientDataHash))
        let leaf = try leafCertificate(for: key, nonce: nonce, validity: tampering.leafValidity)
        let object: CBOREncoding = .map([
            ("fmt", .text("apple-appattest")),
            (
                "attStmt",
                .map([
                    ("x5c", .array(try authority.chain(leaf).map { .bytes($0) })),
                    ("receipt", .bytes(Array("software receipt".utf8))),
                ])
            ),
            ("authData", .bytes(authenticatorData)),
        ])
        return Data(object.encoded)
    }

    /// `DCAppAttestService.generateAssertion`: the next counter, signed over `clientDataHash`.
    public func generateAssertion(_ keyID: String, clientDataHash: Data) throws -> Data {
        let (key, counter): (P256.Signing.PrivateKey, UInt32) = try lock.withLock {
            guard let entry = keys[keyID] else { throw SoftwareDeviceError.unknownKey }
            keys[keyID] = (entry.key, entry.counter + 1)
            return (entry.key, entry.counter + 1)
        }
        let authenticatorData = relyingPartyHash(nil) + [0x40] + bigEndian(counter)
        let signature = try key.signature(for: Data(SHA256.hash(data: Data(authenticatorData) + clientDataHash)))
        let assertion: CBOREncoding = .map([
            ("signature", .bytes(Array(signature.derRepresentation))), ("authenticatorData", .bytes(authenticatorData)),
        ])
        return Data(assertion.encoded)
    }

    private func relyingPartyHash(_ bundle: String?) -> [UInt8] {
        Array(SHA256.hash(data: Data("\(teamID).\(bundle ?? bundleID)".utf8)))
    }

    private func leafCertificate(for key: P256.Signing.PrivateKey, nonce: [UInt8], validity: ClosedRange<Date>?) throws -> Certificate {
        var serializer = DER.Serializer()
        try serializer.appendConstructedNode(identifier: .sequence) { sequence in
            try sequence.serialize(explicitlyTaggedWithTagNumber: 1, tagClass: .contextSpecific) { tagged in
                try tagged.serialize(ASN1OctetString(contentBytes: nonce[...]))
            }
        }
        return try authority.leaf(
            for: Certificate.PublicKey(key.publicKey),
            subject: Data(SHA256.hash(data: key.publicKey.x963Representation)).base64EncodedString(),
            validity: validity,
            extensions: try Certificate.Extensions {
                Certificate.Extension(oid: [1, 2, 840, 113_635, 100, 8, 2], critical: false, value: serializer.serializedBytes[...])
            }
        )
    }

    /// The credential public key as a COSE_Key (RFC 9053): EC2, ES256, P-256, x, y.
    private func coseKey(_ key: P256.Signing.PublicKey) -> [UInt8] {
        let point = Array(key.x963Representation)
        return [0xA5, 0x01, 0x02, 0x03, 0x26, 0x20, 0x01, 0x21, 0x58, 0x20] + point[1...32] + [0x22, 0x58, 0x20] + point[33...64]
    }

    private func bigEndian<T: FixedWidthInteger>(_ value: T) -> [UInt8] {
        withUnsafeBytes(of: value.bigEndian) { Array($0) }
    }
}

public enum SoftwareDeviceError: Error {
    case unknownKey
}

/// The CBOR this device writes (RFC 8949, definite lengths, shortest forms): text-keyed maps, arrays,
/// byte and text strings. Attestation objects need no more.
indirect enum CBOREncoding {
    case text(String)
    case bytes([UInt8])
    case array([CBOREncoding])
    case map([(String, CBOREncoding)])

    var encoded: [UInt8] {
        switch self {
        case .text(let text): return Self.head(3, UInt64(text.utf8.count)) + Array(text.utf8)
        case .bytes(let bytes): return Self.head(2, UInt64(bytes.count)) + bytes
        case .array(let items): return Self.head(4, UInt64(items.count)) + items.flatMap(\.encoded)
        case .map(let entries): return Self.head(5, UInt64(entries.count)) + entries.flatMap { CBOREncoding.text($0.0).encoded + $0.1.encoded }
        }
    }

    private static func head(_ major: UInt8, _ argument: UInt64) -> [UInt8] {
        switch argument {
        case 0..<24: return [major << 5 | UInt8(argument)]
        case 24...0xFF: return [major << 5 | 24, UInt8(argument)]
        case 0x100...0xFFFF: return [major << 5 | 25] + withUnsafeBytes(of: UInt16(argument).bigEndian) { Array($0) }
        default: return [major << 5 | 26] + withUnsafeBytes(of: UInt32(argument).bigEndian) { Array($0) }
        }
    }
}

/// The software device stands in for `DCAppAttestService` in GatehouseClient on Linux.
extension SoftwareAppAttestDevice: AppAttestKeyService {
    public func attestKey(_ keyID: String, clientDataHash: Data) throws -> Data {
        try attestKey(keyID, clientDataHash: clientDataHash, tampering: Tampering())
    }
}
