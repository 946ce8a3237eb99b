import Crypto
import Foundation
import GatehouseCore
import GatehouseStore

/// Challenges, attestation tokens and the signed configuration, for the mobile SDK.
public struct AttestationSDKOperations: Sendable {
    let access: AttesterAccess
    let issuer: String
    /// Challenges and redemptions per client address and device (`GATEHOUSE_ATTEST_REQUESTS_PER_MINUTE`).
    let limits: RateLimits
    let hardware: HardwareProofOperations
    let integrity: PlayIntegrityProofOperations

    public init(
        access: AttesterAccess,
        issuer: String,
        limits: RateLimits,
        trust: AttestationTrustSource,
        playIntegrity: any PlayIntegrityUpstream
    ) {
        self.access = access
        self.issuer = issuer
        self.limits = limits
        hardware = HardwareProofOperations(access: access, trust: trust)
        integrity = PlayIntegrityProofOperations(access: access, google: playIntegrity)
    }

    public struct IssuedChallenge: Sendable {
        public let attester: Attester
        /// The proof-of-work, unless the attester asks only for the captcha.
        public let challenge: PowChallenge?
        /// Whether the token exchange needs a captcha pass too (the attester's kind, or a risky device).
        public let captchaRequired: Bool
        /// The single-use nonce the device's hardware signs (or its classic Play Integrity request
        /// carries), when the attester requires hardware or is a `playIntegrity` attester.
        public let nonce: String?
        /// Standard Play Integrity's `requestHash` for the nonce, where Play Integrity verdicts are taken.
        public var requestHash: String? {
            guard let nonce, attester.kind == .playIntegrity || attester.acceptPlayIntegrity != nil else { return nil }
            return PlayIntegritySettings.requestHash(nonce: nonce)
        }
        public let level: Int
        public let expiresAt: Date
    }

    /// What a started device must do for a token: proof-of-work as hard as the attester and the
    /// device's recent risk say, the captcha, or both.
    public func challenge(app: App, attestID: String, deviceID: String, address: String?) async throws -> IssuedChallenge {
        let now = access.clock.now()
        try await limits.admit(.attestChallenge, address: address, device: try DeviceID(validating: deviceID), at: now)
        let (attester, device) = try await access.attesterForDevice(app: app, attestID: attestID, deviceID: deviceID)
        let (difficulty, level) = try await difficulty(attester, app: app, device: device, at: now)
        let expiresAt = now.addingTimeInterval(TimeInterval(attester.challengeLifetimeSeconds))
        var generator = SystemRandomNumberGenerator()
        let challenge =
            attester.kind.asksForWork
            ? Altcha.create(
                difficulty,
                binding: PowBinding(attestID: attester.attestID.rawValue, deviceID: device.rawValue),
                expiresAt: expiresAt,
                key: access.powKey(app),
                using: &generator
            ) : nil
        access.devices.countActivity([ActivityKey(appID: app.id, at: now, metric: .attestIssued, label: attester.kind.rawValue)])
        return IssuedChallenge(
            attester: attester,
            challenge: challenge,
            captchaRequired: AdaptiveDifficulty.requiresCaptcha(attester, level: level),
            nonce: hardware.nonce(for: attester, app: app, device: device, expiresAt: expiresAt),
            level: level,
            expiresAt: expiresAt
        )
    }

    /// Verifies what the attester asks for (a hardware proof over the nonce, once; a solved
    /// challenge, once; a captcha pass, once) and issues the attestation token.
    public func token(
        app: App,
        attestID: String,
        deviceID: String,
        payload: String?,
        captchaPassToken: String?,
        pay: String?,
        proof: HardwareProof?,
        integrityToken: String? = nil,
        integrityRequest: String? = nil,
        nonce: String?,
        address: String?
    ) async throws -> (
        token: String, claims: AttestationClaims, attester: Attester
    ) {
        let now = access.clock.now()
        try await limits.admit(.attestToken, address: address, device: try DeviceID(validating: deviceID), at: now)
        let (attester, device) = try await access.attesterForDevice(app: app, attestID: attestID, deviceID: deviceID)
        if let pay, !AttestationToken.isBindingHash(pay) {
            throw DomainError(.invalidBinding, "pay is base64(SHA-256(bound value)): 44 characters.", field: "pay")
        }
        var hardwareKey: AttestedDeviceKey?
        var integrityLevel: PlayIntegrityLevel?
        let presented = PlayIntegrityProofOperations.Presented(token: integrityToken, request: integrityRequest, nonce: nonce)
        if attester.kind == .playIntegrity || (attester.acceptPlayIntegrity != nil && proof == nil && integrityToken != nil) {
            integrityLevel = try await integrity.verify(presented, attester: attester, app: app, device: device, address: address, at: now)
        } else if attester.requiresHardware {
            hardwareKey = try await hardware.verify(proof, nonce: nonce, attester: attester, app: app, device: device, address: address, at: now)
        }
        if attester.kind.asksForWork { try await spendSolution(payload, app: app, attester: attester, device: device, at: now) }
        // The captcha requirement is judged again here, from the device's risk now (a PoW challenge
        // carries no state), so a device that turned risky meanwhile cannot skip it.
        let level = try await difficulty(attester, app: app, device: device, at: now).level
        if AdaptiveDifficulty.requiresCaptcha(attester, level: level) {
            try await redeemCaptchaPass(captchaPassToken, app: app, attester: attester, device: device, at: now)
        }
        var generator = SystemRandomNumberGenerator()
        let issued = AttestationToken.issue(
            issuer: issuer,
            appKey: app.appKey,
            device: device,
            attester: attester,
            address: address,
            binding: pay,
            hardware: hardwareKey,
            playIntegrity: integrityLevel,
            at: now,
            signer: try await access.signer(for: attester, app: app),
            using: &generator
        )
        access.devices.countActivity([ActivityKey(appID: app.id, at: now, metric: .attestSolved, label: attester.kind.rawValue)])
        return (issued.token, issued.claims, attester)
    }

    /// A solved challenge, spent before its work is checked: one try per challenge, right or wrong.
    private func spendSolution(_ payload: String?, app: App, attester: Attester, device: DeviceID, at now: Date) async throws {
        guard let payload else {
            throw DomainError(.invalidPowPayload, "This attester asks for proof-of-work: send the solved challenge as payload.", field: "payload")
        }
        let claim = try Altcha.claim(
            payload: payload,
            key: access.powKey(app),
            binding: PowBinding(attestID: attester.attestID.rawValue, deviceID: device.rawValue),
            at: now
        )
        guard try await access.store.useSolution(appID: app.id, replayKey: claim.replayKey, expiresAt: claim.expiresAt) else {
            throw DomainError(.solutionReused, "This challenge was already tried once; fetch a new one.", field: "payload")
        }
        _ = try claim.checkWork()
    }

    private func difficulty(_ attester: Attester, app: App, device: DeviceID, at now: Date) async throws -> (difficulty: PowDifficulty, level: Int) {
        let activity = attester.adaptive ? try await access.store.recentActivity(appID: app.id, deviceID: device, at: now) : .quiet
        return AdaptiveDifficulty.difficulty(for: attester, activity: activity)
    }

    /// Spends a captcha pass solved for this attester and device. A pass presented for another
    /// attester or device is spent all the same: it was shown where it does not belong.
    private func redeemCaptchaPass(_ token: String?, app: App, attester: Attester, device: DeviceID, at now: Date) async throws {
        guard let token else {
            throw DomainError(
                .invalidCaptchaPass,
                "This attester asks for the slider captcha: send its pass token as captchaPassToken.",
                field: "captchaPassToken"
            )
        }
        guard let hash = CaptchaPass.storedHash(of: token) else {
            throw DomainError(.invalidCaptchaPass, "captchaPassToken is not a pass token.", field: "captchaPassToken")
        }
        switch try await access.captcha.redeemCaptchaPass(appID: app.id, tokenHash: hash, as: .attester(attester.attestID), at: now) {
        case .unknown:
            throw DomainError(.invalidCaptchaPass, "No captcha pass has this token.", field: "captchaPassToken")
        case .spent:
            throw DomainError(.invalidCaptchaPass, "This captcha pass expired or was used; solve the captcha again.", field: "captchaPassToken")
        case .valid(let pass):
            guard pass.challenge.request.attestID == attester.attestID, pass.challenge.request.deviceID == device else {
                throw DomainError(
                    .invalidCaptchaPass,
                    "This captcha pass was solved for another attester or device; open the captcha with this attestId and deviceId.",
                    field: "captchaPassToken"
                )
            }
        }
    }

    /// The signed dynamic configuration, or nil when the SDK's copy (`since`) is current.
    public func signedConfig(app: App, since: Int64?) async throws -> (version: Int64, jws: String)? {
        let stored = try await access.store.sdkConfig(appID: app.id)
        if let since, since >= stored.version { return nil }
        let attesters = try await access.store.attesters(appID: app.id).map(\.attester)
        let document = SDKConfiguration.document(
            appKey: app.appKey,
            version: stored.version,
            hosts: stored.protectedHosts,
            attesters: attesters,
            at: access.clock.now()
        )
        return (stored.version, SDKConfiguration.sign(document, with: try await access.keys.active().signer))
    }
}
