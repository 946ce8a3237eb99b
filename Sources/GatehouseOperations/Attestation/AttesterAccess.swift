import Crypto
import Foundation
import GatehouseCore
import GatehouseStore

/// What the attestation services of the three audiences share: the store, the app lookups, the
/// sealing box, the signing keys and the clock, and how an attester, its signer and an app's ALTCHA
/// key are found.
public struct AttesterAccess: Sendable {
    let store: any AttestationStore & AttestedKeyStore
    let devices: any DeviceRiskStore
    let captcha: any CaptchaStore
    let apps: AppOperations
    let box: SecretBox
    public let keys: SigningKeyRing
    let clock: any GatehouseClock
    /// `GATEHOUSE_STS_PRIVATE_ENDPOINTS`: whether a Play Integrity attester may name an internal decode endpoint.
    let allowInternalEndpoints: Bool

    public init(
        store: any AttestationStore & AttestedKeyStore,
        devices: any DeviceRiskStore,
        captcha: any CaptchaStore,
        apps: AppOperations,
        box: SecretBox,
        keys: SigningKeyRing,
        clock: any GatehouseClock,
        allowInternalEndpoints: Bool = false
    ) {
        self.allowInternalEndpoints = allowInternalEndpoints
        self.store = store
        self.devices = devices
        self.captcha = captcha
        self.apps = apps
        self.box = box
        self.keys = keys
        self.clock = clock
    }

    func attesterForDevice(app: App, attestID: String, deviceID: String) async throws -> (Attester, DeviceID) {
        try app.requireActive()
        let stored = try await storedAttester(app, try AttestID(validating: attestID))
        guard stored.attester.status == .active else {
            throw DomainError(.attesterDisabled, "Attester \(stored.attester.attestID) is disabled.", field: "attestId")
        }
        let device = try DeviceID(validating: deviceID)
        guard try await devices.device(appID: app.id, id: device) != nil else {
            throw DomainError(.invalidDeviceID, "This device has not been started; call device start first.", field: "deviceId")
        }
        return (stored.attester, device)
    }

    func storedAttester(_ app: App, _ attestID: AttestID) async throws -> StoredAttester {
        let id = attestID
        guard let stored = try await store.attester(appID: app.id, attestID: id) else {
            throw DomainError(.attesterNotFound, "App \(app.appKey) has no attester \(id).", field: "attestId")
        }
        return stored
    }

    func signer(for attester: Attester, app: App) async throws -> JWSSigningKey {
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
    func sharedSecret(for attester: Attester, previous: StoredAttester?) -> (sealed: [UInt8]?, shown: String?) {
        guard attester.algorithm == .hs256 else { return (nil, nil) }
        if let previous, previous.attester.algorithm == .hs256, let sealed = previous.sealedSecret { return (sealed, nil) }
        let secret = (0..<32).map { _ in UInt8.random(in: 0...255) }
        return (box.seal(secret, context: Self.secretContext(attester)), Data(secret).base64EncodedString())
    }

    /// The ALTCHA HMAC key of an app: HKDF of the master key, written as hex because ALTCHA's
    /// libraries take the key as a string (docs/attestation.md shows how to derive it).
    func powKey(_ app: App) -> SymmetricKey {
        let derived = box.derivedKey(purpose: "altcha-hmac-v1:\(app.appKey)")
        return SymmetricKey(data: Array(derived.withUnsafeBytes { Hex.encode($0) }.utf8))
    }

    /// A `playIntegrity` attester's credentials, opened.
    func credentials(_ stored: StoredAttester) throws -> PlayIntegrityCredentials {
        guard let sealed = stored.sealedCredentials else {
            throw StoreError.corruptRow("playIntegrity attester \(stored.attester.attestID) has no credentials")
        }
        return try PlayIntegrityCredentials.opened(sealed, with: box, context: Self.credentialsContext(stored.attester))
    }

    /// The credentials a `playIntegrity` attester keeps after `change`, sealed: those sent over those
    /// kept, only what its modes use. Nil for every other kind.
    func sealedCredentials(for attester: Attester, change: AttesterChange, previous: StoredAttester?) throws -> [UInt8]? {
        guard let settings = attester.playIntegrity else { return nil }
        if settings.decodeEndpoint != PlayIntegritySettings.googleEndpoint,
            let refusal = UpstreamEndpoint.refusal(settings.decodeEndpoint, allowInternal: allowInternalEndpoints)
        {
            throw DomainError(.invalidAttester, "playIntegrity.decodeEndpoint: \(refusal).", field: "playIntegrity.decodeEndpoint")
        }
        var kept: PlayIntegrityCredentials?
        if let previous, previous.attester.kind == .playIntegrity { kept = try credentials(previous) }
        let merged = try (change.playIntegrityCredentials ?? PlayIntegrityCredentials()).merged(over: kept, modes: settings.modes)
        return merged.sealed(with: box, context: Self.credentialsContext(attester))
    }

    static func credentialsContext(_ attester: Attester) -> String {
        SealedValue.attesterCredentialsContext(appID: attester.appID, attestID: attester.attestID.rawValue)
    }

    static func secretContext(_ attester: Attester) -> String {
        SealedValue.attesterSecretContext(appID: attester.appID, attestID: attester.attestID.rawValue)
    }
}

extension AttesterAccess {
    /// Over the whole store: each capability's part from its own store.
    public init(
        store: SQLStore,
        apps: AppOperations,
        box: SecretBox,
        keys: SigningKeyRing,
        clock: any GatehouseClock,
        allowInternalEndpoints: Bool = false
    ) {
        self.init(
            store: store.attestation,
            devices: store.deviceRisk,
            captcha: store.captcha,
            apps: apps,
            box: box,
            keys: keys,
            clock: clock,
            allowInternalEndpoints: allowInternalEndpoints
        )
    }
}
