import Crypto
import Foundation
import GatehouseSigning

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

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
        let challenge = try await sdk("/v1/attest/challenges", ["attestId": attestID, "deviceId": device])
        var body: [String: Any] = ["attestId": attestID, "deviceId": device]
        if challenge["captchaRequired"] as? Bool == true {
            guard let captchaPassToken else {
                throw GatehouseClientError.captchaRequired(captchaPage: challenge["captchaPage"] as? String ?? "captcha")
            }
            body["captchaPassToken"] = captchaPassToken
        }
        if let pow = challenge["challenge"] as? [String: Any] {
            let started = Date()
            do {
                body["payload"] = try ProofOfWork.solve(pow, format: challenge["format"] as? String ?? "altcha-v1")
            } catch {
                throw GatehouseClientError.unsolvableChallenge
            }
            log.log(.debug, "solved \(attestID) (level \(challenge["level"] as? Int ?? 0)) in \(Int(Date().timeIntervalSince(started) * 1000)) ms")
        }
        if let boundValue { body["pay"] = AttestationBinding.pay(boundValue) }
        if let nonce = challenge["nonce"] as? String {
            guard let appAttestKeys else { throw GatehouseClientError.hardwareAttestationUnavailable }
            for (field, value) in try await appAttestKeys.proof(nonce: nonce) { body[field] = value }
        }
        let answer = try await sdk("/v1/attest/tokens", body)
        if challenge["nonce"] != nil { await appAttestKeys?.accepted() }
        guard let token = answer["token"] as? String, let header = answer["tokenHeader"] as? String else {
            throw GatehouseClientError.sdk(code: -8, reason: "malformed_answer", message: "no token")
        }
        let expiresAt = (answer["expiresAt"] as? String).flatMap(Self.parseDate) ?? Date().addingTimeInterval(60)
        let issued = AttestationToken(token: token, header: header, expiresAt: expiresAt, boundValue: boundValue)
        tokens[attestID] = issued
        log.log(.info, "attestation token for \(attestID): \(GatehouseLogger.redacted(token))")
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
        var components = URLComponents(url: configuration.baseURL.appendingPathComponent("v1/sts/token"), resolvingAgainstBaseURL: false)!
        components.queryItems = [URLQueryItem(name: "appKey", value: configuration.appKey), URLQueryItem(name: "roleId", value: roleID)]
        var request = URLRequest(url: components.url!)
        request.setValue(attestation.token, forHTTPHeaderField: attestation.header)
        let (data, _) = try await HTTPExchange.send(request, session: configuration.session)
        let token = try FederationToken(json: HTTPExchange.json(data))
        federation[roleID] = token
        log.log(.info, "federation token for \(roleID) until \(token.expirationInGMTFormat)")
        return token
    }
}
