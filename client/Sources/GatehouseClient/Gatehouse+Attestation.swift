import Crypto
import Foundation
import GatehouseAPI
import GatehouseSigning

/// Attestation tokens (with their challenges, proof of work and App Attest) and the object-storage
/// credentials they open.
extension Gatehouse {
    // MARK: Attestation

    /// Binds the next tokens to `value` (the seed's token binding, `pay`), or unbinds with nil.
    /// Prefetched tokens bound to something else are dropped.
    public func bind(value: String?) {
        guard value != boundValue else { return }
        boundValue = value
        tokens = [:]
    }

    /// Fetches a challenge for `attestID`, solves it and returns a fresh token (bound to the current
    /// value, if any). With `captchaPassToken` it also hands over a solved slider captcha.
    @discardableResult
    public func attest(attestID: String, captchaPassToken: String? = nil) async throws -> AttestationToken {
        do {
            return try await attestOnce(attestID: attestID, captchaPassToken: captchaPassToken)
        } catch GatehouseClientError.sdk(_, let reason, _) where ["attested_key_unknown", "attestation_key_reused"].contains(reason) {
            // The server no longer stands for the key: attest a new one, once.
            await appAttestKeys?.discard()
            return try await attestOnce(attestID: attestID, captchaPassToken: captchaPassToken)
        }
    }

    func attestOnce(attestID: String, captchaPassToken: String?) async throws -> AttestationToken {
        let device = try started()
        let appKey = configuration.appKey
        let asked = Components.Schemas.AttestChallengeRequest(attestId: attestID, deviceId: device)
        let challenge = try await sdk("/v1/attest/challenges") {
            try await $0.fetchAttestChallenge(headers: .init(unsignedFor: appKey), body: .json(asked)).ok.body.json
        }
        var body = Components.Schemas.AttestTokenRequest(attestId: attestID, deviceId: device)
        if challenge.captchaRequired {
            guard let captchaPassToken else { throw GatehouseClientError.captchaRequired(captchaPage: challenge.captchaPage ?? "captcha") }
            body.captchaPassToken = captchaPassToken
        }
        if let pow = challenge.challenge {
            let started = Date()
            do {
                body.payload = try ProofOfWork.solve(pow, format: challenge.format)
            } catch {
                throw GatehouseClientError.unsolvableChallenge
            }
            log.log(.debug, "solved \(attestID) (level \(challenge.level)) in \(Int(Date().timeIntervalSince(started) * 1000)) ms")
        }
        if let boundValue { body.pay = AttestationBinding.pay(boundValue) }
        if let nonce = challenge.nonce {
            guard let appAttestKeys else { throw GatehouseClientError.hardwareAttestationUnavailable }
            try await appAttestKeys.proof(nonce: nonce).apply(to: &body)
        }
        let solution = body
        let answer = try await sdk("/v1/attest/tokens") {
            try await $0.redeemAttestSolution(headers: .init(unsignedFor: appKey), body: .json(solution)).ok.body.json
        }
        if challenge.nonce != nil { await appAttestKeys?.accepted() }
        let issued = AttestationToken(token: answer.token, header: answer.tokenHeader, expiresAt: answer.expiresAt, boundValue: boundValue)
        tokens[attestID] = issued
        log.log(.info, "attestation token for \(attestID): \(GatehouseLogger.redacted(answer.token))")
        return issued
    }

    /// A usable token for `attestID`: the prefetched one while it has 10 seconds left and is bound to
    /// the current value, else a new one.
    public func attestationToken(attestID: String) async throws -> AttestationToken {
        if let token = tokens[attestID], token.boundValue == boundValue, token.expiresAt.timeIntervalSinceNow > 10 { return token }
        return try await attest(attestID: attestID)
    }

    /// Gets a token ahead of need, so that the request that needs it does not wait for the solver.
    public func prefetch(attestID: String) async throws {
        _ = try await attestationToken(attestID: attestID)
    }

    /// The prefetched token for `attestID`, without fetching one.
    func cachedToken(attestID: String) -> AttestationToken? {
        guard let token = tokens[attestID], token.boundValue == boundValue, token.expiresAt.timeIntervalSinceNow > 10 else { return nil }
        return token
    }

    /// Drops a token the server refused (used up, expired early).
    func forget(attestID: String) { tokens[attestID] = nil }

    // MARK: Object storage

    /// STS credentials for `roleID`, in the shape OSS's `OSSFederationToken` takes. Reused while more
    /// than 5 minutes remain, then fetched again (the seed's rule).
    public func federationToken(roleID: String, attestID: String) async throws -> FederationToken {
        if let cached = federation[roleID], cached.expiration.timeIntervalSinceNow > FederationToken.refreshMargin { return cached }
        let attestation = try await attestationToken(attestID: attestID)
        let query = Operations.GetSTSToken.Input.Query(appKey: configuration.appKey, roleId: roleID)
        let answer = try await AttestationHeaderMiddleware.$token.withValue((attestation.header, attestation.token)) {
            try await sdk("/v1/sts/token") { try await $0.getSTSToken(query: query).ok.body.json }
        }
        let token = try FederationToken(answer)
        federation[roleID] = token
        log.log(.info, "federation token for \(roleID) until \(token.expirationInGMTFormat)")
        return token
    }
}
