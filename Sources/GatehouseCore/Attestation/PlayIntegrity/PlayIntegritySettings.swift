import Crypto
import Foundation

/// How a `playIntegrity` attester reads tokens: `classic` offline with the app's own response keys,
/// `standard` by asking Google (`decodeIntegrityToken`) with a service account.
public enum PlayIntegrityMode: String, Sendable, Codable, CaseIterable, Comparable {
    case classic, standard

    public static func < (left: PlayIntegrityMode, right: PlayIntegrityMode) -> Bool { left.rawValue < right.rawValue }
}

/// A `playIntegrity` attester's settings, its secrets apart (`PlayIntegrityCredentials`, sealed).
public struct PlayIntegritySettings: Sendable, Equatable {
    public var policy: PlayIntegrityPolicy
    /// One or both, sorted.
    public var modes: [PlayIntegrityMode]
    /// Where standard mode's decode call goes: Google's unless the operator names another, which must
    /// pass the STS endpoint rule (`UpstreamEndpoint`).
    public var decodeEndpoint: String

    public static let googleEndpoint = "https://playintegrity.googleapis.com"

    public init(policy: PlayIntegrityPolicy, modes: [PlayIntegrityMode], decodeEndpoint: String = Self.googleEndpoint) {
        self.policy = policy
        self.modes = Array(Set(modes)).sorted()
        self.decodeEndpoint = decodeEndpoint
    }

    /// The settings as an operator sends them, checked. Whether another decode endpoint may be called
    /// is the server's setting (`GATEHOUSE_STS_PRIVATE_ENDPOINTS`), checked where the server knows it.
    public static func validated(
        policy: PlayIntegrityPolicy,
        modes: [String],
        decodeEndpoint: String?
    ) throws(DomainError) -> PlayIntegritySettings {
        var parsed: [PlayIntegrityMode] = []
        for mode in modes {
            guard let known = PlayIntegrityMode(rawValue: mode) else {
                throw DomainError(.invalidAttester, "playIntegrity.modes holds classic, standard or both.", field: "playIntegrity.modes")
            }
            parsed.append(known)
        }
        guard !parsed.isEmpty else {
            throw DomainError(.invalidAttester, "playIntegrity.modes holds classic, standard or both.", field: "playIntegrity.modes")
        }
        let endpoint = decodeEndpoint ?? Self.googleEndpoint
        if endpoint != Self.googleEndpoint {
            guard endpoint.utf8.count <= 512 else {
                throw DomainError(
                    .invalidAttester,
                    "playIntegrity.decodeEndpoint is a URL of at most 512 characters.",
                    field: "playIntegrity.decodeEndpoint"
                )
            }
            if let refusal = UpstreamEndpoint.refusal(endpoint, allowInternal: true) {
                throw DomainError(.invalidAttester, "playIntegrity.decodeEndpoint: \(refusal).", field: "playIntegrity.decodeEndpoint")
            }
        }
        return PlayIntegritySettings(policy: policy, modes: parsed, decodeEndpoint: endpoint.hasSuffix("/") ? String(endpoint.dropLast()) : endpoint)
    }

    /// The `decodeIntegrityToken` URL for the app's package.
    public var decodeURL: String { "\(decodeEndpoint)/v1/\(policy.packageName):decodeIntegrityToken" }

    /// What the audit log records.
    var summary: [String] {
        [
            "packageName \(policy.packageName)", "certificateDigests \(policy.certificateDigests.joined(separator: ","))",
            "minimumIntegrity \(policy.minimumIntegrity.rawValue)", "allowVirtual \(policy.allowVirtual)",
            "requirePlayRecognized \(policy.requirePlayRecognized)", "requireLicensed \(policy.requireLicensed)",
            "maximumAgeSeconds \(policy.maximumAgeSeconds)", "modes \(modes.map(\.rawValue).joined(separator: ","))",
            "decodeEndpoint \(decodeEndpoint)",
        ]
    }
}

/// A `playIntegrity` attester's secrets, sealed at rest with the master key as one value and never
/// shown again: the classic mode's response keys and the standard mode's service account.
public struct PlayIntegrityCredentials: Sendable, Equatable, Codable {
    /// Base64 of the 32-byte AES key (Play Console).
    public var decryptionKey: String?
    /// Base64 of the EC P-256 public key's DER (Play Console).
    public var verificationKey: String?
    /// The service account's JSON key file.
    public var serviceAccount: String?

    public init(decryptionKey: String? = nil, verificationKey: String? = nil, serviceAccount: String? = nil) {
        self.decryptionKey = decryptionKey
        self.verificationKey = verificationKey
        self.serviceAccount = serviceAccount
    }

    /// These credentials over `previous`: what is given replaces, what is not is kept; then only what
    /// `modes` use is kept, and each mode must have all it needs (each checked as it will be used).
    public func merged(over previous: PlayIntegrityCredentials?, modes: [PlayIntegrityMode]) throws(DomainError) -> PlayIntegrityCredentials {
        var merged = PlayIntegrityCredentials(
            decryptionKey: decryptionKey ?? previous?.decryptionKey,
            verificationKey: verificationKey ?? previous?.verificationKey,
            serviceAccount: serviceAccount ?? previous?.serviceAccount
        )
        if modes.contains(.classic) {
            guard let decryption = merged.decryptionKey, let verification = merged.verificationKey else {
                throw DomainError(
                    .invalidAttester,
                    "Classic mode needs playIntegrity.decryptionKey and playIntegrity.verificationKey (Play Console's response keys).",
                    field: "playIntegrity.decryptionKey"
                )
            }
            _ = try PlayIntegrityKeys(decryptionKey: decryption, verificationKey: verification)
        } else {
            (merged.decryptionKey, merged.verificationKey) = (nil, nil)
        }
        if modes.contains(.standard) {
            guard let account = merged.serviceAccount else {
                throw DomainError(
                    .invalidAttester,
                    "Standard mode needs playIntegrity.serviceAccount (the service account's JSON key file).",
                    field: "playIntegrity.serviceAccount"
                )
            }
            _ = try GoogleServiceAccount(json: account)
        } else {
            merged.serviceAccount = nil
        }
        return merged
    }

    /// The classic keys, when classic mode has them.
    public var keys: PlayIntegrityKeys? {
        guard let decryptionKey, let verificationKey else { return nil }
        return try? PlayIntegrityKeys(decryptionKey: decryptionKey, verificationKey: verificationKey)
    }

    public var account: GoogleServiceAccount? { serviceAccount.flatMap { try? GoogleServiceAccount(json: $0) } }

    public func sealed(with box: SecretBox, context: String) -> [UInt8] {
        box.seal(Array((try? JSONEncoder().encode(self)) ?? Data()), context: context)
    }

    public static func opened(_ sealed: [UInt8], with box: SecretBox, context: String) throws -> PlayIntegrityCredentials {
        try JSONDecoder().decode(PlayIntegrityCredentials.self, from: Data(try box.open(sealed, context: context)))
    }
}

extension PlayIntegritySettings {
    /// The standard request's `requestHash` for a challenge's nonce: base64url (no padding) of SHA-256
    /// of the nonce's UTF-8 bytes (docs/attestation.md, for SDK authors).
    public static func requestHash(nonce: String) -> String {
        Base64URL.encode(Array(SHA256.hash(data: Array(nonce.utf8))))
    }
}
