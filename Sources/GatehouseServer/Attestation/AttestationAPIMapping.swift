import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseStore

extension Components.Schemas.AttesterKind {
    init(_ kind: AttesterKind) {
        // The contract's enum is the domain's, value for value.
        self.init(rawValue: kind.rawValue)!
    }
}

extension Components.Schemas.Attester {
    init(_ attester: Attester, appKey: AppKey) {
        self.init(
            appKey: appKey.rawValue,
            attestId: attester.attestID.rawValue,
            kind: .init(attester.kind),
            pow: .init(
                format: attester.pow.format == .altchaV1 ? .altchaV1 : .altchaV2,
                maxNumber: attester.pow.maxNumber,
                cost: attester.pow.cost,
                keyPrefix: attester.pow.keyPrefix
            ),
            adaptive: attester.adaptive,
            challengeLifetimeSeconds: attester.challengeLifetimeSeconds,
            tokenLifetimeSeconds: attester.tokenLifetimeSeconds,
            tokenHeader: attester.tokenHeader,
            maxUses: attester.maxUses ?? 0,
            algorithm: attester.algorithm == .es256 ? .es256 : .hs256,
            bindHeader: attester.bindHeader,
            requireSignature: attester.requireSignature,
            appAttest: attester.appAttest.map {
                .init(teamId: $0.teamID, bundleIds: $0.bundleIDs, environment: $0.environment == .production ? .production : .development)
            },
            androidKeyAttestation: attester.androidKeyAttestation.map {
                .init(
                    packageNames: $0.packageNames,
                    signingCertificateDigests: $0.signingCertificateDigestsHex,
                    securityLevel: $0.minimumSecurityLevel == .strongBox ? .strongBox : .tee,
                    allowSoftware: $0.allowsSoftware,
                    requireVerifiedBoot: $0.requireVerifiedBoot,
                    requireDeviceLocked: $0.requireDeviceLocked,
                    minimumOsPatchLevel: $0.minimumOSPatchLevel
                )
            },
            playIntegrity: attester.playIntegrity.map(Components.Schemas.PlayIntegrityPolicyFields.init),
            acceptPlayIntegrity: attester.acceptPlayIntegrity.map {
                .init(attestId: $0.attestID.rawValue, minimumIntegrity: .init(rawValue: $0.minimumIntegrity.rawValue) ?? .device)
            },
            requireHardwareAttestation: attester.requiresHardware,
            enforcement: attester.enforcement == .monitor ? .monitor : .enforce,
            routes: attester.routes.map { .init(method: .init(rawValue: $0.method) ?? ._ast_, pathPrefix: $0.pathPrefix) },
            status: attester.status == .active ? .active : .disabled,
            createdAt: attester.createdAt,
            updatedAt: attester.updatedAt
        )
    }
}

/// The settings an attester's create and update bodies share, so that one mapping reads both.
protocol AttesterSettingsBody {
    var kind: Components.Schemas.AttesterKind? { get }
    var pow: Components.Schemas.PowSettings? { get }
    var adaptive: Bool? { get }
    var challengeLifetimeSeconds: Int? { get }
    var tokenLifetimeSeconds: Int? { get }
    var tokenHeader: Components.Schemas.HeaderName? { get }
    var maxUses: Int? { get }
    var algorithmName: String? { get }
    var bindHeader: String? { get }
    var requireSignature: Bool? { get }
    var appAttest: Components.Schemas.AppAttestSettings? { get }
    var androidKeyAttestation: Components.Schemas.AndroidKeyAttestationSettings? { get }
    var requireHardwareAttestation: Bool? { get }
    var playIntegrity: Components.Schemas.PlayIntegritySettings? { get }
    var acceptPlayIntegrity: Components.Schemas.PlayIntegrityAcceptance? { get }
    var enforcementName: String? { get }
    var routes: [Components.Schemas.ProtectedRoute]? { get }
}

extension Components.Schemas.AttesterCreate: AttesterSettingsBody {
    var algorithmName: String? { algorithm?.rawValue }
    var enforcementName: String? { enforcement?.rawValue }
}

extension Components.Schemas.AttesterUpdate: AttesterSettingsBody {
    var algorithmName: String? { algorithm?.rawValue }
    var enforcementName: String? { enforcement?.rawValue }
}

extension AttesterChange {
    init(_ body: Components.Schemas.AttesterCreate) throws(DomainError) {
        try self.init(settings: body)
    }

    init(_ body: Components.Schemas.AttesterUpdate) throws(DomainError) {
        try self.init(settings: body)
        status = body.status?.rawValue
    }

    private init(settings body: some AttesterSettingsBody) throws(DomainError) {
        self.init()
        kind = body.kind?.rawValue
        powFormat = body.pow?.format?.rawValue
        maxNumber = body.pow?.maxNumber
        cost = body.pow?.cost
        keyPrefix = body.pow?.keyPrefix
        adaptive = body.adaptive
        challengeLifetimeSeconds = body.challengeLifetimeSeconds
        tokenLifetimeSeconds = body.tokenLifetimeSeconds
        tokenHeader = body.tokenHeader
        maxUses = body.maxUses
        algorithm = body.algorithmName
        bindHeader = body.bindHeader
        requireSignature = body.requireSignature
        routes = body.routes?.map { ($0.method.rawValue, $0.pathPrefix) }
        requireHardwareAttestation = body.requireHardwareAttestation
        enforcement = body.enforcementName
        if let settings = body.appAttest {
            appAttest = try AppAttestPolicy.validated(
                teamID: settings.teamId,
                bundleIDs: settings.bundleIds,
                environment: settings.environment.rawValue
            )
        }
        if let settings = body.playIntegrity {
            (playIntegrity, playIntegrityCredentials) = try Self.playIntegrity(settings)
        }
        if let acceptance = body.acceptPlayIntegrity {
            acceptPlayIntegrity =
                acceptance.minimumIntegrity == .none
                ? .some(nil) : try PlayIntegrityAcceptance(attestID: acceptance.attestId, minimumIntegrity: acceptance.minimumIntegrity.rawValue)
        }
        if let settings = body.androidKeyAttestation {
            androidKeyAttestation = try AndroidKeyAttestationPolicy.validated(
                packageNames: settings.packageNames,
                signingCertificateDigests: settings.signingCertificateDigests,
                securityLevel: settings.securityLevel?.rawValue ?? "TEE",
                allowSoftware: settings.allowSoftware ?? false,
                requireVerifiedBoot: settings.requireVerifiedBoot ?? true,
                requireDeviceLocked: settings.requireDeviceLocked ?? true,
                minimumOSPatchLevel: settings.minimumOsPatchLevel.flatMap { $0 == 0 ? nil : $0 }
            )
        }
    }
}

extension AttesterChange {
    /// A `playIntegrity` object as sent: the settings, and apart from them the secrets it carries.
    static func playIntegrity(
        _ body: Components.Schemas.PlayIntegritySettings
    ) throws(DomainError) -> (PlayIntegritySettings, PlayIntegrityCredentials) {
        let policy = try PlayIntegrityPolicy.validated(
            packageName: body.packageName,
            certificateDigests: body.certificateDigests,
            minimumIntegrity: body.minimumIntegrity?.rawValue ?? "device",
            allowVirtual: body.allowVirtual ?? false,
            requirePlayRecognized: body.requirePlayRecognized ?? true,
            requireLicensed: body.requireLicensed ?? false,
            maximumAgeSeconds: body.maximumAgeSeconds ?? 300
        )
        let settings = try PlayIntegritySettings.validated(
            policy: policy,
            modes: body.modes.map(\.rawValue),
            decodeEndpoint: body.decodeEndpoint
        )
        return (
            settings,
            PlayIntegrityCredentials(decryptionKey: body.decryptionKey, verificationKey: body.verificationKey, serviceAccount: body.serviceAccount)
        )
    }
}

extension Components.Schemas.PlayIntegrityPolicyFields {
    init(_ settings: PlayIntegritySettings) {
        let policy = settings.policy
        self.init(
            packageName: policy.packageName,
            certificateDigests: policy.certificateDigests,
            minimumIntegrity: .init(rawValue: policy.minimumIntegrity.rawValue) ?? .device,
            allowVirtual: policy.allowVirtual,
            requirePlayRecognized: policy.requirePlayRecognized,
            requireLicensed: policy.requireLicensed,
            maximumAgeSeconds: policy.maximumAgeSeconds,
            modes: settings.modes.compactMap { .init(rawValue: $0.rawValue) },
            decodeEndpoint: settings.decodeEndpoint
        )
    }
}

extension Components.Schemas.AltchaChallenge {
    init(_ challenge: PowChallenge) {
        switch challenge {
        case .v1(let v1):
            self.init(algorithm: v1.algorithm, challenge: v1.challenge, maxnumber: v1.maxNumber, salt: v1.salt, signature: v1.signature)
        case .v2(let v2):
            let p = v2.parameters
            self.init(
                signature: v2.signature,
                parameters: .init(
                    algorithm: p.algorithm,
                    cost: p.cost,
                    keyLength: p.keyLength,
                    keyPrefix: p.keyPrefix,
                    nonce: p.nonce,
                    salt: p.salt,
                    expiresAt: p.expiresAt,
                    data: .init(attestId: p.binding.attestID, deviceId: p.binding.deviceID)
                )
            )
        }
    }
}

extension Components.Schemas.SDKConfigAdmin {
    init(_ config: StoredSDKConfig) {
        self.init(version: Int(config.version), protectedHosts: config.protectedHosts.map { .init(host: $0.host, pins: $0.pins) })
    }
}

extension Components.Schemas.SigningKeyInfo {
    init(_ key: SigningKey) {
        self.init(
            kid: key.kid,
            algorithm: .es256,
            createdAt: key.createdAt,
            retiredAt: key.retiredAt,
            publishedUntil: key.publishedUntil,
            active: key.retiredAt == nil
        )
    }
}

extension Components.Schemas.AttestationClaims {
    init(_ claims: AttestationClaims) {
        self.init(
            iss: claims.iss,
            aud: claims.aud,
            sub: claims.sub,
            did: claims.did,
            iat: claims.iat,
            exp: claims.exp,
            jti: claims.jti,
            attestId: claims.attestId,
            ip: claims.ip,
            pay: claims.pay,
            lim: claims.lim,
            att: claims.att.flatMap { .init(rawValue: $0) },
            integrity: claims.integrity.flatMap { .init(rawValue: $0) }
        )
    }
}
