import Crypto
import Foundation
import GatehouseCore
import GatehouseStore

/// Client attestation: attesters (operators), challenges and tokens (SDK), the gate and
/// introspection (the app's side), the JWKS and the SDK's signed configuration.
public struct AttestationOperations: Sendable {
    let store: any GatehouseStore
    let apps: AppOperations
    let box: SecretBox
    public let keys: SigningKeyRing
    let clock: any GatehouseClock
    let issuer: String
    let signatures: SignatureOperations
    /// Challenges and redemptions per client address and device (`GATEHOUSE_ATTEST_REQUESTS_PER_MINUTE`).
    let limits: RateLimits
    /// Shared by every copy of these operations, so by every request this instance serves.
    let verifiedTokens = VerifiedTokens()

    public init(
        store: any GatehouseStore,
        apps: AppOperations,
        box: SecretBox,
        keys: SigningKeyRing,
        clock: any GatehouseClock,
        issuer: String,
        signatures: SignatureOperations,
        limits: RateLimits
    ) {
        self.signatures = signatures
        self.limits = limits
        self.store = store
        self.apps = apps
        self.box = box
        self.keys = keys
        self.clock = clock
        self.issuer = issuer
    }

    // MARK: Operators

    /// A created or changed attester, and its HS256 secret when one was just generated (shown once).
    public struct AttesterResult: Sendable {
        public let attester: Attester
        public let sharedSecret: String?
    }

    public func createAttester(_ appKey: String, attestID: String, change: AttesterChange, origin: ChangeOrigin) async throws -> AttesterResult {
        let app = try await apps.app(appKey)
        try app.requireActive()
        let id = try AttestID(validating: attestID)
        let now = clock.now()
        let attester = try change.applied(to: Attester(appID: app.id, attestID: id, createdAt: now, updatedAt: now), at: now)
        let (sealed, secret) = sharedSecret(for: attester, previous: nil)
        let audit = origin.entry(
            at: now,
            action: "attester.create",
            targetType: "attester",
            targetID: "\(app.appKey)/\(id)",
            appID: app.id,
            before: nil,
            after: attester.snapshot
        )
        do {
            try await store.createAttester(StoredAttester(attester: attester, sealedSecret: sealed), audit: audit)
        } catch {
            if case .conflict = error { throw DomainError(.attesterExists, "App \(app.appKey) already has attester \(id).", field: "attestId") }
            throw error
        }
        return AttesterResult(attester: attester, sharedSecret: secret)
    }

    public func updateAttester(_ appKey: String, attestID: String, change: AttesterChange, origin: ChangeOrigin) async throws -> AttesterResult {
        let app = try await apps.app(appKey)
        try app.requireActive()
        let stored = try await storedAttester(app, attestID)
        let now = clock.now()
        let updated = try change.applied(to: stored.attester, at: now)
        let (sealed, secret) = sharedSecret(for: updated, previous: stored)
        let audit = origin.entry(
            at: now,
            action: "attester.update",
            targetType: "attester",
            targetID: "\(app.appKey)/\(updated.attestID)",
            appID: app.id,
            before: stored.attester.snapshot,
            after: updated.snapshot
        )
        try await store.updateAttester(from: stored.attester, to: StoredAttester(attester: updated, sealedSecret: sealed), audit: audit)
        return AttesterResult(attester: updated, sharedSecret: secret)
    }

    public func attesters(_ appKey: String) async throws -> [Attester] {
        let app = try await apps.app(appKey)
        return try await store.attesters(appID: app.id).map(\.attester)
    }

    public func attester(_ appKey: String, attestID: String) async throws -> Attester {
        try await storedAttester(try await apps.app(appKey), attestID).attester
    }

    public func sdkConfig(_ appKey: String) async throws -> StoredSDKConfig {
        try await store.sdkConfig(appID: try await apps.app(appKey).id)
    }

    public func setProtectedHosts(_ appKey: String, hosts: [(host: String, pins: [String])], origin: ChangeOrigin) async throws -> StoredSDKConfig {
        let app = try await apps.app(appKey)
        var parsed: [ProtectedHost] = []
        for entry in hosts { parsed.append(try ProtectedHost(host: entry.host, pins: entry.pins)) }
        parsed = try SDKConfiguration.checkedHosts(parsed)
        let before = try await store.sdkConfig(appID: app.id)
        let now = clock.now()
        let audit = origin.entry(
            at: now,
            action: "sdk-config.hosts",
            targetType: "app",
            targetID: app.appKey.rawValue,
            appID: app.id,
            before: ["protectedHosts": .strings(before.protectedHosts.map(\.host))],
            after: ["protectedHosts": .strings(parsed.map(\.host))]
        )
        return try await store.setProtectedHosts(appID: app.id, hosts: parsed, at: now, audit: audit)
    }

    // MARK: The SDK

    public struct IssuedChallenge: Sendable {
        public let attester: Attester
        /// The proof-of-work, unless the attester asks only for the captcha.
        public let challenge: PowChallenge?
        /// Whether the token exchange needs a captcha pass too (the attester's kind, or a risky device).
        public let captchaRequired: Bool
        public let level: Int
        public let expiresAt: Date
    }

    /// What a started device must do for a token: proof-of-work as hard as the attester and the
    /// device's recent risk say, the captcha, or both.
    public func challenge(app: App, attestID: String, deviceID: String, address: String?) async throws -> IssuedChallenge {
        let now = clock.now()
        try await limits.admit(.attestChallenge, address: address, device: try DeviceID(validating: deviceID), at: now)
        let (attester, device) = try await attesterForDevice(app: app, attestID: attestID, deviceID: deviceID)
        let (difficulty, level) = try await difficulty(attester, app: app, device: device, at: now)
        let expiresAt = now.addingTimeInterval(TimeInterval(attester.challengeLifetimeSeconds))
        var generator = SystemRandomNumberGenerator()
        let challenge =
            attester.kind.asksForWork
            ? Altcha.create(
                difficulty,
                binding: PowBinding(attestID: attester.attestID.rawValue, deviceID: device.rawValue),
                expiresAt: expiresAt,
                key: powKey(app),
                using: &generator
            ) : nil
        return IssuedChallenge(
            attester: attester,
            challenge: challenge,
            captchaRequired: AdaptiveDifficulty.requiresCaptcha(attester, level: level),
            level: level,
            expiresAt: expiresAt
        )
    }

    /// Verifies what the attester asks for (a solved challenge, once; a captcha pass, once) and issues
    /// the attestation token.
    public func token(
        app: App,
        attestID: String,
        deviceID: String,
        payload: String?,
        captchaPassToken: String?,
        pay: String?,
        address: String?
    ) async throws -> (
        token: String, claims: AttestationClaims, attester: Attester
    ) {
        let now = clock.now()
        try await limits.admit(.attestToken, address: address, device: try DeviceID(validating: deviceID), at: now)
        let (attester, device) = try await attesterForDevice(app: app, attestID: attestID, deviceID: deviceID)
        if let pay, !AttestationToken.isBindingHash(pay) {
            throw DomainError(.invalidBinding, "pay is base64(SHA-256(bound value)): 44 characters.", field: "pay")
        }
        if attester.kind.asksForWork {
            guard let payload else {
                throw DomainError(.invalidPowPayload, "This attester asks for proof-of-work: send the solved challenge as payload.", field: "payload")
            }
            let claim = try Altcha.claim(
                payload: payload,
                key: powKey(app),
                binding: PowBinding(attestID: attester.attestID.rawValue, deviceID: device.rawValue),
                at: now
            )
            // Spent before the work is checked: one try per challenge, right or wrong.
            guard try await store.useSolution(appID: app.id, replayKey: claim.replayKey, expiresAt: claim.expiresAt) else {
                throw DomainError(.solutionReused, "This challenge was already tried once; fetch a new one.", field: "payload")
            }
            _ = try claim.checkWork()
        }
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
            at: now,
            signer: try await signer(for: attester, app: app),
            using: &generator
        )
        return (issued.token, issued.claims, attester)
    }

    private func difficulty(_ attester: Attester, app: App, device: DeviceID, at now: Date) async throws -> (difficulty: PowDifficulty, level: Int) {
        let activity = attester.adaptive ? try await store.recentActivity(appID: app.id, deviceID: device, at: now) : .quiet
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
        switch try await store.redeemCaptchaPass(appID: app.id, tokenHash: hash, as: .attester(attester.attestID), at: now) {
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
        let stored = try await store.sdkConfig(appID: app.id)
        if let since, since >= stored.version { return nil }
        let attesters = try await store.attesters(appID: app.id).map(\.attester)
        let document = SDKConfiguration.document(
            appKey: app.appKey,
            version: stored.version,
            hosts: stored.protectedHosts,
            attesters: attesters,
            at: clock.now()
        )
        return (stored.version, SDKConfiguration.sign(document, with: try await keys.active().signer))
    }

    // MARK: The app's side

    public func jwks() async throws -> [JWK] {
        try await keys.published().map(\.jwk)
    }

    public enum Introspection: Sendable {
        case active(AttestationClaims)
        case inactive(AttestationTokenFailure)
    }

    /// Checks a token for the calling app; with `consume`, counts a use of a limited-use token.
    public func introspect(app: App, token: String, attestID: String?, boundValue: String?, consume: Bool) async throws -> Introspection {
        let expected = try attestID.map { value throws(DomainError) in try AttestID(validating: value) }
        guard (1...CompactJWS.maximumLength).contains(token.unicodeScalars.count) else {
            throw DomainError(.invalidAttestationToken, "token is 1 to 8192 characters.", field: "token")
        }
        if let boundValue, boundValue.unicodeScalars.count > CompactJWS.maximumLength {
            throw DomainError(.invalidBinding, "boundValue is at most 8192 characters.", field: "boundValue")
        }
        return try await check(
            app: app,
            token: token,
            attestID: expected,
            boundValue: boundValue,
            requireBinding: boundValue != nil,
            consume: consume
        )
    }

    /// The gate: which attester gates `method uri`, and whether the presented token opens it.
    /// `header` reads a header of the original request by name.
    /// - Parameter url: the full URL the client sent (for a signature's whash), when the proxy says it.
    public func gate(app: App, method: String, uri: String, url: String?, header: (String) -> String?) async throws -> GateVerdict {
        let attesters = try await store.attesters(appID: app.id).map(\.attester)
        guard let path = Gate.normalizedPath(uri) else {
            // An unreadable path is gated by every attester that gates anything; the first one challenges.
            guard let first = attesters.first(where: { $0.status == .active && !$0.routes.isEmpty }) else { return .open }
            return .challenge(attester: first.attestID, reason: .malformed)
        }
        guard let attester = Gate.attester(for: method, path: path, among: attesters) else { return .open }
        let outcome = try await check(
            app: app,
            token: header(attester.tokenHeader),
            attestID: attester.attestID,
            boundValue: attester.bindHeader.flatMap(header),
            requireBinding: attester.bindHeader != nil,
            consume: true
        )
        switch outcome {
        case .inactive(let reason): return .challenge(attester: attester.attestID, reason: reason)
        case .active(let claims):
            guard attester.requireSignature else { return .pass(attester: attester.attestID, claims: claims) }
            let verification = try await signatures.verify(
                app: app,
                request: PresentedRequest(
                    method: method,
                    url: url ?? uri,
                    bodyHash: [],
                    wtoken: header(RequestSigning.wtokenHeader),
                    whash: header(RequestSigning.whashHeader)
                ),
                bodyKnown: false,
                policy: .block,
                captchaPassToken: nil
            )
            if let failure = verification.failure { return .refuse(attester: attester.attestID, reason: failure) }
            return .pass(attester: attester.attestID, claims: claims)
        }
    }

    private func check(
        app: App,
        token: String?,
        attestID: AttestID?,
        boundValue: String?,
        requireBinding: Bool,
        consume: Bool
    ) async throws
        -> Introspection
    {
        let now = clock.now()
        var trusted = AttestationVerificationKeys(published: [:])
        if let token, case .success(let jws) = CompactJWS.parse(token) {
            switch jws.algorithm {
            case .es256:
                if let kid = jws.keyID, let key = try await keys.publishedKey(kid: kid) { trusted.published[kid] = key.privateKey.publicKey }
            case .hs256:
                for stored in try await store.attesters(appID: app.id) where stored.attester.algorithm == .hs256 {
                    if let sealed = stored.sealedSecret {
                        trusted.sharedSecrets[stored.attester.attestID.rawValue] = SymmetricKey(
                            data: try box.open(sealed, context: Self.secretContext(stored.attester))
                        )
                    }
                }
            }
        }
        let verified = AttestationToken.verify(
            token,
            appKey: app.appKey,
            attestID: attestID,
            boundValue: boundValue,
            requireBinding: requireBinding,
            keys: trusted,
            at: now,
            verified: verifiedTokens
        )
        switch verified {
        case .failure(let reason): return .inactive(reason)
        case .success(let claims):
            if consume, let limit = claims.lim {
                guard try await store.useToken(appID: app.id, jti: claims.jti, limit: limit, expiresAt: claims.expiresAt) else {
                    return .inactive(.usedUp)
                }
            }
            return .active(claims)
        }
    }

    // MARK: Helpers

    private func attesterForDevice(app: App, attestID: String, deviceID: String) async throws -> (Attester, DeviceID) {
        try app.requireActive()
        let stored = try await storedAttester(app, attestID)
        guard stored.attester.status == .active else {
            throw DomainError(.attesterDisabled, "Attester \(stored.attester.attestID) is disabled.", field: "attestId")
        }
        let device = try DeviceID(validating: deviceID)
        guard try await store.device(appID: app.id, id: device) != nil else {
            throw DomainError(.invalidDeviceID, "This device has not been started; call device start first.", field: "deviceId")
        }
        return (stored.attester, device)
    }

    private func storedAttester(_ app: App, _ attestID: String) async throws -> StoredAttester {
        let id = try AttestID(validating: attestID)
        guard let stored = try await store.attester(appID: app.id, attestID: id) else {
            throw DomainError(.attesterNotFound, "App \(app.appKey) has no attester \(id).", field: "attestId")
        }
        return stored
    }

    private func signer(for attester: Attester, app: App) async throws -> JWSSigningKey {
        switch attester.algorithm {
        case .es256:
            return try await keys.active().signer
        case .hs256:
            guard let sealed = try await store.attester(appID: app.id, attestID: attester.attestID)?.sealedSecret else {
                throw StoreError.corruptRow("HS256 attester \(attester.attestID) has no secret")
            }
            return .hs256(SymmetricKey(data: try box.open(sealed, context: Self.secretContext(attester))))
        }
    }

    /// Keeps the sealed HS256 secret while the attester stays HS256; generates one when it becomes
    /// HS256 (returned once, base64); drops it when it leaves HS256.
    private func sharedSecret(for attester: Attester, previous: StoredAttester?) -> (sealed: [UInt8]?, shown: String?) {
        guard attester.algorithm == .hs256 else { return (nil, nil) }
        if let previous, previous.attester.algorithm == .hs256, let sealed = previous.sealedSecret { return (sealed, nil) }
        let secret = (0..<32).map { _ in UInt8.random(in: 0...255) }
        return (box.seal(secret, context: Self.secretContext(attester)), Data(secret).base64EncodedString())
    }

    /// The ALTCHA HMAC key of an app: HKDF of the master key, written as hex because ALTCHA's
    /// libraries take the key as a string (docs/attestation.md shows how to derive it).
    private func powKey(_ app: App) -> SymmetricKey {
        let derived = box.derivedKey(purpose: "altcha-hmac-v1:\(app.appKey)")
        return SymmetricKey(data: Array(derived.withUnsafeBytes { Hex.encode($0) }.utf8))
    }

    static func secretContext(_ attester: Attester) -> String {
        SealedValue.attesterSecretContext(appID: attester.appID, attestID: attester.attestID.rawValue)
    }
}
