// Signatures: request signatures (wtoken, whash) and the secondary-verification signal.
// Serves seed 000 (the WAF app-protection SDK's vmpSign, vmpHash and cptCheck).

import Foundation
import GatehouseCore
import GatehouseStore

/// Request signatures for the app's backend: is this request's wtoken (and whash) good, and should
/// the request pass, be challenged with the captcha, or be refused.
public struct SignatureOperations: Sendable {
    let store: any SignatureStore
    let devices: any DeviceRiskStore
    let captcha: any CaptchaStore
    let keys: ServerKeys
    let clock: any GatehouseClock

    public init(
        store: any SignatureStore,
        devices: any DeviceRiskStore,
        captcha: any CaptchaStore,
        box: SecretBox,
        clock: any GatehouseClock
    ) {
        self.store = store
        self.devices = devices
        self.captcha = captcha
        self.keys = ServerKeys(box: box)
        self.clock = clock
    }

    public struct Verification: Sendable, Equatable {
        public let signature: ReadSignature?
        public let failure: SignatureFailure?
        public let verdict: SecondaryVerdict
        /// Whether a captcha pass sent with the retry was taken (nil when none was needed or sent).
        public let passAccepted: Bool?
    }

    /// The account and address the app's backend names, when it knows them, are matched against the
    /// operator's challenge list with the device.
    public struct Subject: Sendable {
        public var account: AccountID?
        public var address: IPAddress?
        public init(account: AccountID? = nil, address: IPAddress? = nil) {
            self.account = account
            self.address = address
        }
    }

    public func verify(
        app: App,
        request: PresentedRequest,
        bodyKnown: Bool = true,
        subject: Subject = Subject(),
        policy: SignatureFailurePolicy,
        captchaPassToken: String?
    ) async throws -> Verification {
        let now = clock.now()
        var signature: ReadSignature?
        var failure: SignatureFailure?
        var latestDecision: RiskDecision?
        switch SignatureCheck.read(request, bodyKnown: bodyKnown) {
        case .failure(let reason): failure = reason
        case .success(let read):
            signature = read
            (failure, latestDecision) = try await check(read, app: app, method: request.method, at: now)
        }
        var challengeListed = false
        if failure == nil, let signature {
            challengeListed = try await devices.listEntries(appID: app.id).contains {
                $0.kind == .challenge && $0.matches(device: signature.deviceID, account: subject.account, address: subject.address)
            }
        }
        var verdict = SecondaryVerification.decide(
            failure: failure,
            policy: policy,
            latestDecision: latestDecision,
            challengeListed: challengeListed,
            passRedeemed: false
        )
        var passAccepted: Bool?
        // A pass is spent only when it changes the answer: a challenge it lets through.
        if case .challenge = verdict, let captchaPassToken {
            let accepted = try await redeem(captchaPassToken, app: app, device: signature?.deviceID, at: now)
            passAccepted = accepted
            verdict = SecondaryVerification.decide(
                failure: failure,
                policy: policy,
                latestDecision: latestDecision,
                challengeListed: challengeListed,
                passRedeemed: accepted
            )
        }
        return Verification(signature: signature, failure: failure, verdict: verdict, passAccepted: passAccepted)
    }

    /// The store-backed checks: device, block, clock, MAC, then the nonce (last, so that a forged
    /// signature cannot burn a real one's nonce). A known device's failures are remembered for an
    /// hour: adaptive attesters make such a device work harder.
    private func check(_ signature: ReadSignature, app: App, method: String, at now: Date) async throws -> (SignatureFailure?, RiskDecision?) {
        guard
            let state = try await store.signingState(
                appID: app.id,
                deviceID: signature.deviceID,
                decidedAfter: now.addingTimeInterval(-SecondaryVerification.decisionWindowSeconds)
            )
        else { return (.unknownDevice, nil) }
        guard !state.denied else { return (.deviceBlocked, state.latestDecision) }
        var failure: SignatureFailure?
        if !SignatureCheck.isFresh(signature, at: now) {
            failure = .staleTimestamp
        } else if !SignatureCheck.macMatches(signature, method: method, deviceKey: DeviceStart.deviceKey(for: state.device, keys: keys)) {
            failure = .badSignature
        } else if try await !devices.useNonce(
            appID: app.id,
            nonce: "w:" + signature.nonce,
            expiresAt: signature.nonceKeptUntil
        ) {
            failure = .replayed
        }
        if let failure { try await store.recordSignatureFailure(appID: app.id, deviceID: signature.deviceID, reason: failure, at: now) }
        return (failure, state.latestDecision)
    }

    /// Takes a captcha pass for a secondary verification: once, and only one solved on this device
    /// when the page knew the device.
    private func redeem(_ token: String, app: App, device: DeviceID?, at now: Date) async throws -> Bool {
        guard let hash = CaptchaPass.storedHash(of: token) else { return false }
        guard case .valid(let pass) = try await captcha.redeemCaptchaPass(appID: app.id, tokenHash: hash, as: .secondaryVerification, at: now)
        else { return false }
        if let solvedOn = pass.challenge.request.deviceID, solvedOn != device { return false }
        return true
    }
}
