import AsyncHTTPClient
import Foundation
import GatehouseCore
import GatehouseOperations
import NIOCore
import NIOHTTP1

/// Standard Play Integrity through Google: the service account's assertion buys an access token (kept
/// until a minute before it expires), then `decodeIntegrityToken` reads the token. Both calls share
/// one deadline; both endpoints pass the STS endpoint rule before each call (`STSClient.endpointRefusal`);
/// redirects are never followed. After `breakerThreshold` failures in a row the breaker opens for
/// `breakerOpenSeconds` and every request is answered at once: Google's outage is a clear refusal to
/// retry later, not a queue of waiting devices.
public struct PlayIntegrityClient: PlayIntegrityUpstream {
    let client: HTTPClient
    let allowInternalEndpoints: Bool
    let deadline: TimeAmount
    let tokens = AccessTokens()
    let breaker = CircuitBreaker()

    static let breakerThreshold = 5
    static let breakerOpenSeconds = 30
    /// A token answer and a verdict are a few kilobytes.
    static let longestAnswer = 64 * 1024

    public init(allowInternalEndpoints: Bool, deadlineMilliseconds: Int) {
        client = STSClient.upstream
        self.allowInternalEndpoints = allowInternalEndpoints
        deadline = .milliseconds(Int64(deadlineMilliseconds))
    }

    public func decode(
        _ token: String,
        settings: PlayIntegritySettings,
        account: GoogleServiceAccount
    ) async -> Result<[UInt8], PlayIntegrityUpstreamFailure> {
        let endpoint = settings.decodeEndpoint
        if let wait = await breaker.openFor(endpoint) {
            return .failure(.unavailable("the breaker is open after repeated failures", retryAfter: wait))
        }
        let until = NIODeadline.now() + deadline
        let outcome = await decodeOnce(token, settings: settings, account: account, until: until)
        switch outcome {
        case .failure(.unavailable): await breaker.failed(endpoint)
        // The operator's setting, not Google's outage: neither opens nor closes the breaker.
        case .failure(.misconfigured): break
        default: await breaker.succeeded(endpoint)
        }
        return outcome
    }

    private func decodeOnce(
        _ token: String,
        settings: PlayIntegritySettings,
        account: GoogleServiceAccount,
        until: NIODeadline
    ) async -> Result<[UInt8], PlayIntegrityUpstreamFailure> {
        let accessToken: String
        switch await self.accessToken(account, until: until) {
        case .failure(let failure): return .failure(failure)
        case .success(let bought): accessToken = bought
        }
        let body = (try? JSONEncoder().encode(JSONValue.object(["integrity_token": .string(token)]))) ?? Data()
        let answer = await post(
            settings.decodeURL,
            headers: [("Content-Type", "application/json"), ("Authorization", "Bearer \(accessToken)")],
            body: Array(body),
            until: until
        )
        switch answer {
        case .failure(let failure): return .failure(failure)
        case .success(let (status, bytes)):
            switch status {
            case 200:
                guard let payload = JSONValue.parse(bytes)?.object?["tokenPayloadExternal"],
                    let encoded = try? JSONEncoder().encode(payload)
                else { return .failure(.unavailable("Google's answer has no tokenPayloadExternal", retryAfter: Self.breakerOpenSeconds)) }
                return .success(Array(encoded))
            case 400: return .failure(.tokenRefused("Google refused the token (400)"))
            case 401, 403:
                // Our credentials: the operator's to fix, so the token's access token is forgotten.
                await tokens.forget(account)
                return .failure(.misconfigured("Google refused the service account (\(status))", retryAfter: Self.breakerOpenSeconds))
            default: return .failure(.unavailable("Google answered \(status)", retryAfter: Self.breakerOpenSeconds))
            }
        }
    }

    private func accessToken(_ account: GoogleServiceAccount, until: NIODeadline) async -> Result<String, PlayIntegrityUpstreamFailure> {
        let now = Date()
        if let kept = await tokens.token(for: account, at: now) { return .success(kept) }
        let form = "grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=" + account.assertion(at: now)
        switch await post(account.tokenURI, headers: [("Content-Type", "application/x-www-form-urlencoded")], body: Array(form.utf8), until: until) {
        case .failure(let failure): return .failure(failure)
        case .success(let (status, bytes)):
            if (400..<500).contains(status) {
                return .failure(.misconfigured("the token endpoint refused the service account (\(status))", retryAfter: Self.breakerOpenSeconds))
            }
            guard status == 200, let answer = JSONValue.parse(bytes)?.object, let token = answer["access_token"]?.string,
                let lifetime = answer["expires_in"]?.integer, lifetime > 0
            else {
                return .failure(.unavailable("the token endpoint answered \(status) without an access token", retryAfter: Self.breakerOpenSeconds))
            }
            await tokens.keep(token, for: account, until: now.addingTimeInterval(TimeInterval(min(lifetime, 3600))))
            return .success(token)
        }
    }

    private func post(
        _ url: String,
        headers: [(String, String)],
        body: [UInt8],
        until: NIODeadline
    ) async -> Result<(Int, [UInt8]), PlayIntegrityUpstreamFailure> {
        if let refusal = await STSClient.endpointRefusal(url, allowInternal: allowInternalEndpoints) {
            return .failure(.misconfigured("endpoint not allowed: \(refusal)", retryAfter: Self.breakerOpenSeconds))
        }
        var request = HTTPClientRequest(url: url)
        request.method = .POST
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(bytes: body))
        do {
            let response = try await client.execute(request, deadline: until)
            let answer = try await response.body.collect(upTo: Self.longestAnswer)
            return .success((Int(response.status.code), Array(buffer: answer)))
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout {
            return .failure(.unavailable("no answer within the deadline", retryAfter: Self.breakerOpenSeconds))
        } catch is NIOTooManyBytesError {
            return .failure(.unavailable("an answer over \(Self.longestAnswer) bytes", retryAfter: Self.breakerOpenSeconds))
        } catch {
            return .failure(.unavailable("unreachable (\(type(of: error)))", retryAfter: Self.breakerOpenSeconds))
        }
    }
}

/// The access tokens bought, by service account, until a minute before each expires.
actor AccessTokens {
    private var kept: [String: (token: String, until: Date)] = [:]

    func token(for account: GoogleServiceAccount, at now: Date) -> String? {
        guard let entry = kept[Self.key(account)], entry.until.addingTimeInterval(-60) > now else { return nil }
        return entry.token
    }

    func keep(_ token: String, for account: GoogleServiceAccount, until: Date) {
        // A handful of attesters per server: the map stays small, but a stale entry is dropped anyway.
        if kept.count > 1000 { kept.removeAll() }
        kept[Self.key(account)] = (token, until)
    }

    func forget(_ account: GoogleServiceAccount) { kept[Self.key(account)] = nil }

    private static func key(_ account: GoogleServiceAccount) -> String { "\(account.clientEmail) \(account.tokenURI) \(account.privateKeyID ?? "")" }
}

/// One breaker per decode endpoint: opens after `PlayIntegrityClient.breakerThreshold` failures in a
/// row, for `breakerOpenSeconds`; the first call after that is let through to try again.
actor CircuitBreaker {
    private var failures: [String: Int] = [:]
    private var openUntil: [String: Date] = [:]

    /// Seconds left while open, else nil.
    func openFor(_ endpoint: String, at now: Date = Date()) -> Int? {
        guard let until = openUntil[endpoint], until > now else { return nil }
        return max(1, Int(until.timeIntervalSince(now).rounded(.up)))
    }

    func failed(_ endpoint: String, at now: Date = Date()) {
        let count = (failures[endpoint] ?? 0) + 1
        failures[endpoint] = count
        if count >= PlayIntegrityClient.breakerThreshold {
            openUntil[endpoint] = now.addingTimeInterval(TimeInterval(PlayIntegrityClient.breakerOpenSeconds))
            failures[endpoint] = 0
        }
    }

    func succeeded(_ endpoint: String) {
        failures[endpoint] = nil
        openUntil[endpoint] = nil
    }
}
