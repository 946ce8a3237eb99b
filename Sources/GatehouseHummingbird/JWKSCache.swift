import AsyncHTTPClient
import Crypto
import Foundation
import GatehouseCore
import NIOCore

/// Gatehouse's published keys, fetched from its JWKS URL and kept for `maxAge`; an unknown `kid`
/// refetches at most every `minimumRefetchInterval`, so a rotation is picked up at once and a flood
/// of forged kids cannot hammer Gatehouse.
public actor JWKSCache {
    private let url: String
    private let client: HTTPClient
    private let maxAge: TimeInterval
    private let minimumRefetchInterval: TimeInterval
    private var keys: [String: PublishedKey] = [:]
    private var fetchedAt: Date?

    public init(url: String, client: HTTPClient = .shared, maxAge: TimeInterval = 300, minimumRefetchInterval: TimeInterval = 10) {
        self.url = url
        self.client = client
        self.maxAge = maxAge
        self.minimumRefetchInterval = minimumRefetchInterval
    }

    /// The key for `kid`, or nil when Gatehouse does not publish it (after one refetch if allowed).
    public func key(kid: String) async throws -> PublishedKey? {
        let now = Date()
        if let fetchedAt, now.timeIntervalSince(fetchedAt) < maxAge, let key = keys[kid] { return key }
        if let fetchedAt, keys[kid] == nil, now.timeIntervalSince(fetchedAt) < minimumRefetchInterval { return nil }
        try await refresh()
        return keys[kid]
    }

    private func refresh() async throws {
        let response = try await client.execute(HTTPClientRequest(url: url), timeout: .seconds(5))
        guard response.status == .ok else { throw JWKSFetchError(status: Int(response.status.code)) }
        let body = try await response.body.collect(upTo: 1 << 20)
        let document = try JSONDecoder().decode(Document.self, from: Data(buffer: body))
        var loaded: [String: PublishedKey] = [:]
        for jwk in document.keys where jwk.kty == "EC" && jwk.crv == "P-256" {
            if let key = jwk.publicKey { loaded[jwk.kid] = PublishedKey(key) }
        }
        keys = loaded
        fetchedAt = Date()
    }

    private struct Document: Decodable {
        let keys: [JWK]
    }
}

/// The JWKS URL answered something other than 200.
public struct JWKSFetchError: Error {
    public let status: Int
}
