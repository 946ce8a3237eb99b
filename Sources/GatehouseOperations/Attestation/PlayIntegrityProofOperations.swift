import Crypto
import Foundation
import GatehouseCore
import GatehouseStore

/// Google gave no verdict (a timeout, its outage, our credentials refused, the breaker open): the SDK
/// is told to retry after `retryAfter` seconds (429 with `Retry-After`, never a 5xx: the device did
/// nothing wrong and Gatehouse is up).
public struct PlayIntegrityUnavailable: Error, Sendable {
    public let detail: String
    public let retryAfter: Int
}

/// The Play Integrity half of a token request: the challenge's nonce spent, then the token read (classic
/// offline, standard through Google) and its verdict judged by the reading attester's policy. What the
/// verdict says of the device is written on its row in one transaction, with the farm counts' sighting.
struct PlayIntegrityProofOperations: Sendable {
    let access: AttesterAccess
    let google: any PlayIntegrityUpstream

    /// The token's request: the mode named, or the reading attester's only one.
    struct Presented: Sendable {
        let token: String?
        let request: String?
        let nonce: String?
    }

    /// The verdict's level, for a token request of `attester` (a `playIntegrity` attester reads its own
    /// tokens; one that accepts Play Integrity has its named attester read them, at its minimum).
    func verify(
        _ presented: Presented,
        attester: Attester,
        app: App,
        device: DeviceID,
        address: String?,
        at now: Date
    ) async throws -> PlayIntegrityLevel {
        let (reader, minimum) = try await readingAttester(for: attester, app: app)
        guard let token = presented.token else {
            throw DomainError(
                .integrityTokenRequired,
                "Attester \(attester.attestID) takes a Play Integrity token: send integrityToken, requested with the challenge's nonce.",
                field: "integrityToken"
            )
        }
        guard let settings = reader.attester.playIntegrity else { throw StoreError.corruptRow("playIntegrity attester without settings") }
        let mode = try self.mode(presented.request, settings: settings)
        guard let nonce = presented.nonce else {
            throw DomainError(.attestationNonceMismatch, "Send the challenge's nonce with the integrity token.", field: "nonce")
        }
        let claim = try AttestationNonce.claim(nonce, binding: HardwareProofOperations.binding(attester, device), key: nonceKey(app), at: now)
        guard try await access.store.useSolution(appID: app.id, replayKey: claim.replayKey, expiresAt: claim.expiresAt) else {
            throw DomainError(.attestationNonceReused, "This nonce was already used once; fetch a new challenge.", field: "nonce")
        }
        let credentials = try access.credentials(reader)
        let assessment: PlayIntegrityPolicy.Assessment
        switch mode {
        case .classic:
            guard let keys = credentials.keys else { throw StoreError.corruptRow("classic Play Integrity attester without its keys") }
            switch PlayIntegrityClassic.verdict(of: token, keys: keys) {
            case .failure(let refusal): assessment = .refused(refusal)
            case .success(let verdict): assessment = settings.policy.assess(verdict, expected: .nonce(nonce), at: now)
            }
        case .standard:
            guard let account = credentials.account else { throw StoreError.corruptRow("standard Play Integrity attester without its account") }
            switch await google.decode(token, settings: settings, account: account) {
            case .failure(.unavailable(let why, let retryAfter)), .failure(.misconfigured(let why, let retryAfter)):
                throw PlayIntegrityUnavailable(
                    detail: "Google Play Integrity gave no verdict (\(why)); retry after \(retryAfter) s.",
                    retryAfter: retryAfter
                )
            case .failure(.tokenRefused):
                assessment = .refused(.malformed)
            case .success(let payload):
                guard let verdict = PlayIntegrityVerdict.parse(payload) else {
                    assessment = .refused(.malformed)
                    break
                }
                assessment = settings.policy.assess(verdict, expected: .requestHash(PlayIntegritySettings.requestHash(nonce: nonce)), at: now)
            }
        }
        return try await record(assessment, minimum: minimum, app: app, device: device, address: address, at: now)
    }

    /// The attester whose settings read the token, and the lowest level the requesting attester takes,
    /// from the instance's copy of the app's attesters (no read of its own on this path); an attester
    /// made on another instance moments ago is read from the store.
    private func readingAttester(for attester: Attester, app: App) async throws -> (StoredAttester, PlayIntegrityLevel?) {
        let attesters = try await access.store.attesters(appID: app.id)
        if attester.kind == .playIntegrity {
            if let own = attesters.first(where: { $0.attester == attester }) { return (own, nil) }
            return (try await access.storedAttester(app, attester.attestID), nil)
        }
        guard let acceptance = attester.acceptPlayIntegrity else { throw Self.noVerdictTaken(attester) }
        var reader = attesters.first(where: { $0.attester.attestID == acceptance.attestID })
        if reader == nil { reader = try await access.store.attester(appID: app.id, attestID: acceptance.attestID) }
        guard let reader, reader.attester.kind == .playIntegrity, reader.attester.status == .active
        else { throw Self.noVerdictTaken(attester) }
        return (reader, acceptance.minimumIntegrity)
    }

    private func mode(_ named: String?, settings: PlayIntegritySettings) throws(DomainError) -> PlayIntegrityMode {
        if let named {
            guard let mode = PlayIntegrityMode(rawValue: named), settings.modes.contains(mode) else {
                throw DomainError(
                    .integrityRefused,
                    "integrityRequest is one of \(settings.modes.map(\.rawValue).joined(separator: ", ")) for this attester.",
                    field: "integrityRequest"
                )
            }
            return mode
        }
        guard settings.modes.count == 1, let only = settings.modes.first else {
            throw DomainError(
                .integrityRefused,
                "This attester takes classic and standard tokens: name which in integrityRequest.",
                field: "integrityRequest"
            )
        }
        return only
    }

    /// Writes what the verdict says of the device (accepted or refused for what it says of it), or
    /// notes a refused attestation (a token that says nothing of this device's request); then the level
    /// or the refusal.
    private func record(
        _ assessment: PlayIntegrityPolicy.Assessment,
        minimum: PlayIntegrityLevel?,
        app: App,
        device: DeviceID,
        address: String?,
        at now: Date
    ) async throws -> PlayIntegrityLevel {
        let sighting = AttestationFarm.Sighting(address: address, member: "device:\(device.rawValue)")
        switch assessment {
        case .refused(let refusal):
            try await access.store.recordAttestationFailure(appID: app.id, deviceID: device, at: now)
            throw Self.refusal(refusal)
        case .refusedDevice(let facts, let refusal):
            try await access.store.recordIntegrity(PlayIntegrityState(facts: facts, at: now), appID: app.id, deviceID: device, sighting: sighting)
            throw Self.refusal(refusal)
        case .accepted(let facts):
            try await access.store.recordIntegrity(PlayIntegrityState(facts: facts, at: now), appID: app.id, deviceID: device, sighting: sighting)
            guard let level = facts.integrity else { throw Self.refusal(.integrityTooLow) }
            if let minimum, level < minimum { throw Self.refusal(.integrityTooLow) }
            return level
        }
    }

    static func noVerdictTaken(_ attester: Attester) -> DomainError {
        DomainError(
            .integrityRefused,
            "Attester \(attester.attestID) takes no Play Integrity verdict now; send a hardware attestation or assertion.",
            field: "integrityToken"
        )
    }

    static func refusal(_ reason: PlayIntegrityRefusal) -> DomainError {
        DomainError(.integrityRefused, "The Play Integrity token was refused: \(reason.rawValue) (docs/attestation.md).", field: "integrityToken")
    }

    private func nonceKey(_ app: App) -> SymmetricKey { HardwareProofOperations.nonceKey(app, box: access.box) }
}
