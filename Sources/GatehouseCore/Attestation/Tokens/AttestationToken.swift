import Crypto
import Foundation

/// The claims of an attestation token (docs/attestation.md).
public struct AttestationClaims: Codable, Equatable, Sendable {
    public var iss: String
    /// The appKey the token is for.
    public var aud: String
    /// The device, as `sub` for generic JWT libraries and `did` as the SDK names it.
    public var sub: String
    public var did: String
    public var iat: Int
    public var exp: Int
    public var jti: String
    public var attestId: String
    public var ip: String?
    /// Token binding: base64(SHA-256(bound value)), as Approov's `pay` claim.
    public var pay: String?
    /// How many requests the token may open, when the attester limits it.
    public var lim: Int?
    /// How the device was attested, when it was: its hardware (`app_attest`, `android_key`) or Google
    /// Play's verdict (`play_integrity`).
    public var att: String?
    /// With a hardware `att`, what holds the device's key: `secure_enclave`, `strongbox`, `tee` or
    /// `software`; with `play_integrity`, the verdict's level: `strong`, `device`, `basic` or `virtual`.
    public var integrity: String?

    public static let playIntegrityAttestation = "play_integrity"

    /// Whether a platform's hardware attested the device (a software-only Android key does not count,
    /// nor does a Play Integrity verdict, which is Google's word and not a key the device holds).
    public var isHardwareAttested: Bool {
        att != nil && att != Self.playIntegrityAttestation && integrity != nil && integrity != HardwareFacts.SecurityLevel.software.rawValue
    }

    /// The verdict's level, for a token a Play Integrity verdict stands behind.
    public var playIntegrityLevel: PlayIntegrityLevel? {
        att == Self.playIntegrityAttestation ? integrity.flatMap(PlayIntegrityLevel.init) : nil
    }

    /// Whether the token meets a requirement of hardware attestation: a hardware-attested key, or a Play
    /// Integrity verdict at or above `minimum` where the operator accepts one.
    public func meetsHardwareRequirement(acceptingPlayIntegrity minimum: PlayIntegrityLevel?) -> Bool {
        if att == Self.playIntegrityAttestation {
            guard let minimum, let level = playIntegrityLevel else { return false }
            return level >= minimum
        }
        return att != nil
    }

    public var expiresAt: Date { Date(timeIntervalSince1970: TimeInterval(exp)) }
}

/// Why a presented attestation token does not open a route. Each is a reason to attest again.
public enum AttestationTokenFailure: String, Error, Sendable, CaseIterable {
    case missing
    case malformed
    case unsupportedAlgorithm = "unsupported_algorithm"
    case unknownKey = "unknown_key"
    case badSignature = "bad_signature"
    case expired
    case wrongApp = "wrong_app"
    case wrongAttester = "wrong_attester"
    case bindingMissing = "binding_missing"
    case bindingMismatch = "binding_mismatch"
    case usedUp = "used_up"
    /// The route's attester requires a hardware-attested device and the token does not say one.
    case hardwareRequired = "hardware_required"
}

/// The keys a verifier trusts: the published ES256 keys by `kid`, and the app's HS256 attester
/// secrets by attestId.
public struct AttestationVerificationKeys: Sendable {
    public var published: [String: PublishedKey]
    public var sharedSecrets: [String: SymmetricKey]

    public init(published: [String: PublishedKey], sharedSecrets: [String: SymmetricKey] = [:]) {
        self.published = published
        self.sharedSecrets = sharedSecrets
    }
}

/// A published ES256 key with its bytes taken once, when it is loaded: the verified-token cache
/// compares them on every gated request, and taking them from the key is a point conversion.
public struct PublishedKey: Sendable {
    public let publicKey: P256.Signing.PublicKey
    let bytes: [UInt8]

    public init(_ publicKey: P256.Signing.PublicKey) {
        self.publicKey = publicKey
        self.bytes = Array(publicKey.rawRepresentation)
    }
}

/// Which keys a presented token asks a verifier for: its algorithm and, for ES256, its kid.
public struct AttestationKeyRequest: Sendable, Equatable {
    public let algorithm: JWSAlgorithm
    public let keyID: String?
}

public enum AttestationToken {
    public static let type = "JWT"

    /// `pay` for a bound value: base64 (standard, padded) of its SHA-256, as Approov computes it.
    public static func binding(of value: String) -> String {
        Data(SHA256.hash(data: Array(value.utf8))).base64EncodedString()
    }

    public static func isBindingHash(_ text: String) -> Bool {
        text.utf8.count == 44 && Data(base64Encoded: text)?.count == 32
    }

    public static func issue<R: RandomNumberGenerator>(
        issuer: String,
        appKey: AppKey,
        device: DeviceID,
        attester: Attester,
        address: String?,
        binding: String?,
        hardware: AttestedDeviceKey? = nil,
        playIntegrity: PlayIntegrityLevel? = nil,
        at now: Date,
        signer: JWSSigningKey,
        using generator: inout R
    ) -> (token: String, claims: AttestationClaims) {
        let issuedAt = Int(now.timeIntervalSince1970)
        let claims = AttestationClaims(
            iss: issuer,
            aud: appKey.rawValue,
            sub: device.rawValue,
            did: device.rawValue,
            iat: issuedAt,
            exp: issuedAt + attester.tokenLifetimeSeconds,
            jti: Base64URL.encode(Altcha.randomBytes(16, using: &generator)),
            attestId: attester.attestID.rawValue,
            ip: address,
            pay: binding,
            lim: attester.maxUses,
            att: playIntegrity != nil ? AttestationClaims.playIntegrityAttestation : hardware?.platform.rawValue,
            integrity: playIntegrity?.rawValue ?? hardware?.facts.securityLevel.rawValue
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let payload = Array((try? encoder.encode(claims)) ?? Data())
        return (signer.sign(payload: payload, type: type), claims)
    }

    /// Verifies a presented token: the one sequence the server and the Hummingbird middleware both run.
    /// A token this instance has verified before is found by its text, before it is parsed, and
    /// `trusting` is asked only whether its key is still trusted; any other token is parsed once and
    /// `trusting` is asked for the keys it names (a kid's published key, the app's HS256 secrets).
    public static func verify(
        _ token: String?,
        appKey: AppKey,
        attestID: AttestID?,
        boundValue: String?,
        requireBinding: Bool,
        at now: Date,
        verified: VerifiedTokens? = nil,
        trusting keys: (AttestationKeyRequest) async throws -> AttestationVerificationKeys
    ) async rethrows -> Result<AttestationClaims, AttestationTokenFailure> {
        guard let token, !token.isEmpty else { return .failure(.missing) }
        if let remembered = verified?.remembered(token) {
            if remembered.holds(under: try await keys(AttestationKeyRequest(algorithm: .es256, keyID: remembered.kid))) {
                return check(remembered.claims, appKey: appKey, attestID: attestID, boundValue: boundValue, requireBinding: requireBinding, at: now)
            }
        }
        switch PresentedAttestationToken.parse(token) {
        case .failure(let reason): return .failure(reason)
        case .success(let presented):
            return verify(
                presented,
                appKey: appKey,
                attestID: attestID,
                boundValue: boundValue,
                requireBinding: requireBinding,
                keys: try await keys(presented.keyRequest),
                at: now,
                verified: verified
            )
        }
    }

    /// The same with keys already at hand.
    public static func verify(
        _ token: String?,
        appKey: AppKey,
        attestID: AttestID?,
        boundValue: String?,
        requireBinding: Bool,
        keys: AttestationVerificationKeys,
        at now: Date,
        verified: VerifiedTokens? = nil
    ) -> Result<AttestationClaims, AttestationTokenFailure> {
        if let token, let remembered = verified?.remembered(token), remembered.holds(under: keys) {
            return check(remembered.claims, appKey: appKey, attestID: attestID, boundValue: boundValue, requireBinding: requireBinding, at: now)
        }
        return PresentedAttestationToken.parse(token).flatMap { presented in
            verify(
                presented,
                appKey: appKey,
                attestID: attestID,
                boundValue: boundValue,
                requireBinding: requireBinding,
                keys: keys,
                at: now,
                verified: verified
            )
        }
    }

    /// Checks a parsed token for `appKey` and, when given, `attestID` and a bound value: key,
    /// signature, expiry, audience, attester, binding. Use limits are the store's job.
    /// - Parameter verified: where an ES256 token whose signature holds is remembered, with its key.
    static func verify(
        _ presented: PresentedAttestationToken,
        appKey: AppKey,
        attestID: AttestID?,
        boundValue: String?,
        requireBinding: Bool,
        keys: AttestationVerificationKeys,
        at now: Date,
        verified: VerifiedTokens?
    ) -> Result<AttestationClaims, AttestationTokenFailure> {
        let jws = presented.jws
        let claims: AttestationClaims
        switch jws.algorithm {
        case .es256:
            guard let kid = jws.keyID, let key = keys.published[kid] else { return .failure(.unknownKey) }
            guard let decoded = decodeClaims(jws) else { return .failure(.malformed) }
            guard jws.isSigned(by: key.publicKey) else { return .failure(.badSignature) }
            claims = decoded
            verified?.remember(claims, token: presented.text, kid: kid, key: key, at: now)
        case .hs256:
            guard let decoded = decodeClaims(jws) else { return .failure(.malformed) }
            guard decoded.aud == appKey.rawValue else { return .failure(.wrongApp) }
            guard let key = keys.sharedSecrets[decoded.attestId] else { return .failure(.unknownKey) }
            guard jws.isSigned(by: key) else { return .failure(.badSignature) }
            claims = decoded
        }
        return check(claims, appKey: appKey, attestID: attestID, boundValue: boundValue, requireBinding: requireBinding, at: now)
    }

    /// What depends on the request, checked on every one, a remembered token's too: audience, expiry,
    /// attester, binding.
    static func check(
        _ claims: AttestationClaims,
        appKey: AppKey,
        attestID: AttestID?,
        boundValue: String?,
        requireBinding: Bool,
        at now: Date
    ) -> Result<AttestationClaims, AttestationTokenFailure> {
        guard claims.aud == appKey.rawValue else { return .failure(.wrongApp) }
        guard now.timeIntervalSince1970 < TimeInterval(claims.exp) else { return .failure(.expired) }
        if let attestID, claims.attestId != attestID.rawValue { return .failure(.wrongAttester) }
        if requireBinding {
            guard let pay = claims.pay else { return .failure(.bindingMissing) }
            guard let boundValue, constantTimeEquals(Array(binding(of: boundValue).utf8), Array(pay.utf8)) else {
                return .failure(.bindingMismatch)
            }
        }
        return .success(claims)
    }

    private static func decodeClaims(_ jws: CompactJWS) -> AttestationClaims? {
        try? JSONDecoder().decode(AttestationClaims.self, from: Data(jws.payload))
    }
}

/// A presented attestation token, parsed once: its text (the verified-token cache's key) and its JWS
/// (which names the algorithm and key to trust).
public struct PresentedAttestationToken: Sendable {
    public let text: String
    public let jws: CompactJWS

    public var keyRequest: AttestationKeyRequest { AttestationKeyRequest(algorithm: jws.algorithm, keyID: jws.keyID) }

    public static func parse(_ token: String?) -> Result<PresentedAttestationToken, AttestationTokenFailure> {
        guard let token, !token.isEmpty else { return .failure(.missing) }
        switch CompactJWS.parse(token) {
        case .success(let jws): return .success(PresentedAttestationToken(text: token, jws: jws))
        case .failure(.unsupportedAlgorithm): return .failure(.unsupportedAlgorithm)
        case .failure: return .failure(.malformed)
        }
    }
}
