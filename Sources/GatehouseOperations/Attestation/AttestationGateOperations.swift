// Attestation: attesters, proof-of-work challenges, attestation tokens (JWT, token binding), the gate.
// Serves seeds 001 (HTTP 428, EO-Attest-Token) and 003 (Approov-Token, pay binding, dynamic configuration).

import Crypto
import Foundation
import GatehouseCore
import GatehouseStore

/// The app's side of attestation: the JWKS, introspection and the gate (nginx `auth_request`).
public struct AttestationGateOperations: Sendable {
    let access: AttesterAccess
    let signatures: SignatureOperations
    /// Shared by every copy of these operations, so by every request this instance serves.
    let verifiedTokens = VerifiedTokens()

    public init(access: AttesterAccess, signatures: SignatureOperations) {
        self.access = access
        self.signatures = signatures
    }

    public func jwks() async throws -> [JWK] {
        try await access.keys.published().map(\.jwk)
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

    /// What the gate said of one request: the verdict, and the route that matched (`METHOD /prefix`).
    public struct GateAnswer: Sendable {
        public let verdict: GateVerdict
        public let route: String?
    }

    /// The gate: which attester gates `method uri`, and whether the presented token opens it; an
    /// attester in `monitor` opens it whatever the token, and the answer says what the gate found.
    /// Every gated request moves the app's verdict counters (the console's overview).
    /// `header` reads a header of the original request by name.
    /// - Parameter url: the full URL the client sent (for a signature's whash), when the proxy says it.
    public func gate(app: App, method: String, uri: String, url: String?, header: (String) -> String?) async throws -> GateAnswer {
        let attesters = try await access.store.attesters(appID: app.id).map(\.attester)
        guard let path = Gate.normalizedPath(uri) else {
            // An unreadable path is gated by every attester that gates anything; the first one challenges.
            guard let first = attesters.first(where: { $0.status == .active && !$0.routes.isEmpty }) else {
                return GateAnswer(verdict: .open, route: nil)
            }
            return answer(app, first, route: nil, .challenge(attester: first.attestID, reason: .malformed), claims: nil)
        }
        guard let (attester, route) = Gate.match(method: method, path: path, among: attesters) else { return GateAnswer(verdict: .open, route: nil) }
        let outcome = try await check(
            app: app,
            token: header(attester.tokenHeader),
            attestID: attester.attestID,
            boundValue: attester.bindHeader.flatMap(header),
            requireBinding: attester.bindHeader != nil,
            requireHardware: attester.requiresHardware,
            acceptPlayIntegrity: attester.acceptPlayIntegrity?.minimumIntegrity,
            consume: true
        )
        switch outcome {
        case .inactive(let reason): return answer(app, attester, route: route, .challenge(attester: attester.attestID, reason: reason), claims: nil)
        case .active(let claims):
            guard attester.requireSignature else {
                return answer(app, attester, route: route, .pass(attester: attester.attestID, claims: claims), claims: claims)
            }
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
            if let failure = verification.failure {
                return answer(app, attester, route: route, .refuse(attester: attester.attestID, reason: failure), claims: claims)
            }
            return answer(app, attester, route: route, .pass(attester: attester.attestID, claims: claims), claims: claims)
        }
    }

    /// `gate` from this instance's memory alone, for an answer given on the event loop: the answer when
    /// the request is let through and all it took (the app's attesters, a token verified before, its
    /// key) was in memory; nil for anything else, which `gate` then answers. Refusals, tokens with use
    /// limits and attesters that require a request signature always take `gate`: they write, or are
    /// answered with a problem.
    public func gateInMemory(app: App, method: String, uri: String, header: (String) -> String?) -> GateAnswer? {
        guard let attesters = access.store.attestersInMemory(appID: app.id)?.map(\.attester), let path = Gate.normalizedPath(uri) else {
            return nil
        }
        guard let (attester, route) = Gate.match(method: method, path: path, among: attesters) else { return GateAnswer(verdict: .open, route: nil) }
        guard !attester.requireSignature, let token = header(attester.tokenHeader),
            case .success(let claims) = AttestationToken.verifyRemembered(
                token,
                appKey: app.appKey,
                attestID: attester.attestID,
                boundValue: attester.bindHeader.flatMap(header),
                requireBinding: attester.bindHeader != nil,
                at: access.clock.now(),
                verified: verifiedTokens,
                trusting: publishedKeyInMemory
            ),
            claims.lim == nil,
            Self.meetsHardware(claims, required: attester.requiresHardware, acceptPlayIntegrity: attester.acceptPlayIntegrity?.minimumIntegrity)
        else { return nil }
        return answer(app, attester, route: route, .pass(attester: attester.attestID, claims: claims), claims: claims)
    }

    private func publishedKeyInMemory(kid: String) -> AttestationVerificationKeys {
        AttestationVerificationKeys(published: access.keys.publishedKeyInMemory(kid: kid).map { [kid: $0.published] } ?? [:])
    }

    /// Whether an attester that requires hardware attestation (or Play Integrity at a level) takes these claims.
    private static func meetsHardware(_ claims: AttestationClaims, required: Bool, acceptPlayIntegrity: PlayIntegrityLevel?) -> Bool {
        !required || claims.meetsHardwareRequirement(acceptingPlayIntegrity: acceptPlayIntegrity)
    }

    /// The enforced verdict, or in `monitor` the request let through with it; counted either way.
    private func answer(_ app: App, _ attester: Attester, route: ProtectedRoute?, _ enforced: GateVerdict, claims: AttestationClaims?) -> GateAnswer {
        var verdict = enforced
        if attester.enforcement == .monitor, let found = enforced.attestVerdict {
            verdict = .monitored(attester: attester.attestID, verdict: found.verdict, claims: found.verdict == .valid ? claims : nil)
        }
        if let found = verdict.attestVerdict {
            let label = "\(attester.attestID) \(found.verdict.rawValue)"
            access.devices.countActivity([ActivityKey(appID: app.id, at: access.clock.now(), metric: .attestVerdict, label: label)])
        }
        return GateAnswer(verdict: verdict, route: route.map { "\($0.method) \($0.pathPrefix)" })
    }

    private func check(
        app: App,
        token: String?,
        attestID: AttestID?,
        boundValue: String?,
        requireBinding: Bool,
        requireHardware: Bool = false,
        acceptPlayIntegrity: PlayIntegrityLevel? = nil,
        consume: Bool
    ) async throws
        -> Introspection
    {
        let verified = try await AttestationToken.verify(
            token,
            appKey: app.appKey,
            attestID: attestID,
            boundValue: boundValue,
            requireBinding: requireBinding,
            at: access.clock.now(),
            verified: verifiedTokens
        ) { request in try await trustedKeys(for: request, app: app) }
        switch verified {
        case .failure(let reason): return .inactive(reason)
        case .success(let claims):
            // Before a use is counted: a token refused here keeps its uses.
            guard Self.meetsHardware(claims, required: requireHardware, acceptPlayIntegrity: acceptPlayIntegrity) else {
                return .inactive(.hardwareRequired)
            }
            if consume, let limit = claims.lim {
                guard try await access.store.useToken(appID: app.id, jti: claims.jti, limit: limit, expiresAt: claims.expiresAt) else {
                    return .inactive(.usedUp)
                }
            }
            return .active(claims)
        }
    }

    /// The key an ES256 token's kid names, if it is published; for HS256, the app's attester secrets.
    private func trustedKeys(for request: AttestationKeyRequest, app: App) async throws -> AttestationVerificationKeys {
        var trusted = AttestationVerificationKeys(published: [:])
        switch request.algorithm {
        case .es256:
            if let kid = request.keyID, let key = try await access.keys.publishedKey(kid: kid) {
                trusted.published[kid] = key.published
            }
        case .hs256:
            for stored in try await access.store.attesters(appID: app.id) where stored.attester.algorithm == .hs256 {
                if let sealed = stored.sealedSecret {
                    trusted.sharedSecrets[stored.attester.attestID.rawValue] = SymmetricKey(
                        data: try access.box.open(sealed, context: AttesterAccess.secretContext(stored.attester))
                    )
                }
            }
        }
        return trusted
    }
}
