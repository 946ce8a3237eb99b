import SwiftASN1

/// The key attestation extension (OID 1.3.6.1.4.1.11129.2.1.17) of an Android attestation certificate,
/// as far as Gatehouse decides on it (source.android.com, "Key and ID attestation", schema versions 1
/// to 400). Fields of the authorization lists that no decision reads are skipped.
public struct AndroidKeyDescription: Equatable, Sendable {
    public let attestationVersion: Int
    public let attestationSecurityLevel: AndroidSecurityLevel
    public let keyMintSecurityLevel: AndroidSecurityLevel
    public let attestationChallenge: [UInt8]
    /// From the hardware-enforced list: what the secure hardware says about the boot.
    public let rootOfTrust: AndroidRootOfTrust?
    /// YYYYMM, hardware-enforced.
    public let osPatchLevel: Int?
    /// The app the key belongs to, as the platform (software-enforced) reports it.
    public let applicationID: AndroidApplicationID?

    static let oid: ASN1ObjectIdentifier = [1, 3, 6, 1, 4, 1, 11129, 2, 1, 17]

    public init(derEncoded bytes: [UInt8]) throws(DomainError) {
        do {
            let root = try DER.parse(bytes)
            (attestationVersion, attestationSecurityLevel, keyMintSecurityLevel, attestationChallenge, rootOfTrust, osPatchLevel, applicationID) =
                try DER.sequence(root, identifier: .sequence) { nodes in
                    let version = try Int(derEncoded: &nodes)
                    let attestationLevel = try AndroidSecurityLevel(try Int(derEncoded: &nodes, withIdentifier: .enumerated))
                    _ = try Int(derEncoded: &nodes)
                    let keyMintLevel = try AndroidSecurityLevel(try Int(derEncoded: &nodes, withIdentifier: .enumerated))
                    let challenge = try ASN1OctetString(derEncoded: &nodes)
                    _ = try ASN1OctetString(derEncoded: &nodes)
                    let software = try AuthorizationList(nodes.next())
                    let hardware = try AuthorizationList(nodes.next())
                    return (
                        version, attestationLevel, keyMintLevel, Array(challenge.bytes), hardware.rootOfTrust, hardware.osPatchLevel,
                        software.applicationID
                    )
                }
        } catch let error as DomainError {
            throw error
        } catch {
            throw DomainError(.malformedAttestation, "The key attestation extension does not parse.")
        }
    }
}

public enum AndroidSecurityLevel: Int, Comparable, Sendable, Codable {
    case software = 0
    case trustedEnvironment = 1
    case strongBox = 2

    init(_ value: Int) throws(DomainError) {
        guard let level = AndroidSecurityLevel(rawValue: value) else {
            throw DomainError(.malformedAttestation, "Unknown security level \(value) in the key attestation.")
        }
        self = level
    }

    public static func < (lhs: Self, rhs: Self) -> Bool { lhs.rawValue < rhs.rawValue }
}

public enum AndroidVerifiedBootState: Int, Sendable, Codable {
    case verified = 0
    case selfSigned = 1
    case unverified = 2
    case failed = 3
}

public struct AndroidRootOfTrust: Equatable, Sendable {
    public let deviceLocked: Bool
    public let verifiedBootState: AndroidVerifiedBootState

    public init(deviceLocked: Bool, verifiedBootState: AndroidVerifiedBootState) {
        self.deviceLocked = deviceLocked
        self.verifiedBootState = verifiedBootState
    }
}

public struct AndroidApplicationID: Equatable, Sendable {
    public let packageNames: [String]
    /// SHA-256 digests of the app's signing certificates.
    public let signatureDigests: [[UInt8]]
}

/// An AuthorizationList: a SEQUENCE of explicitly tagged, optional fields in tag order.
private struct AuthorizationList {
    var rootOfTrust: AndroidRootOfTrust?
    var osPatchLevel: Int?
    var applicationID: AndroidApplicationID?

    private static let rootOfTrustTag: UInt = 704
    private static let osPatchLevelTag: UInt = 706
    private static let applicationIDTag: UInt = 709

    init(_ node: ASN1Node?) throws {
        guard let node else { throw ASN1Error.invalidASN1Object(reason: "missing authorization list") }
        guard case .constructed(let fields) = node.content, node.identifier == .sequence else {
            throw ASN1Error.unexpectedFieldType(node.identifier)
        }
        for field in fields where field.identifier.tagClass == .contextSpecific {
            switch field.identifier.tagNumber {
            case Self.rootOfTrustTag:
                rootOfTrust = try DER.explicitlyTagged(field, tagNumber: Self.rootOfTrustTag, tagClass: .contextSpecific) { node in
                    try DER.sequence(node, identifier: .sequence) { nodes in
                        _ = try ASN1OctetString(derEncoded: &nodes)
                        let locked = try Bool(derEncoded: &nodes)
                        let state = try Int(derEncoded: &nodes, withIdentifier: .enumerated)
                        guard let bootState = AndroidVerifiedBootState(rawValue: state) else {
                            throw ASN1Error.invalidASN1Object(reason: "verified boot state \(state)")
                        }
                        while nodes.next() != nil {}
                        return AndroidRootOfTrust(deviceLocked: locked, verifiedBootState: bootState)
                    }
                }
            case Self.osPatchLevelTag:
                osPatchLevel = try DER.explicitlyTagged(field, tagNumber: Self.osPatchLevelTag, tagClass: .contextSpecific) {
                    try Int(derEncoded: $0)
                }
            case Self.applicationIDTag:
                let encoded = try DER.explicitlyTagged(field, tagNumber: Self.applicationIDTag, tagClass: .contextSpecific) {
                    try ASN1OctetString(derEncoded: $0)
                }
                applicationID = try Self.applicationID(Array(encoded.bytes))
            default:
                continue
            }
        }
    }

    /// AttestationApplicationId ::= SEQUENCE { SET OF SEQUENCE { packageName OCTET STRING, version INTEGER },
    /// SET OF OCTET STRING }, itself DER inside an OCTET STRING.
    private static func applicationID(_ bytes: [UInt8]) throws -> AndroidApplicationID {
        try DER.sequence(try DER.parse(bytes), identifier: .sequence) { nodes in
            let packages: [String] = try DER.set(of: PackageInfo.self, identifier: .set, nodes: &nodes).map(\.name)
            let digests = try DER.set(of: ASN1OctetString.self, identifier: .set, nodes: &nodes).map { Array($0.bytes) }
            return AndroidApplicationID(packageNames: packages, signatureDigests: digests)
        }
    }

    private struct PackageInfo: DERParseable {
        let name: String

        init(derEncoded node: ASN1Node) throws {
            name = try DER.sequence(node, identifier: .sequence) { nodes in
                let name = try ASN1OctetString(derEncoded: &nodes)
                _ = try Int(derEncoded: &nodes)
                return String(decoding: name.bytes, as: UTF8.self)
            }
        }
    }
}
