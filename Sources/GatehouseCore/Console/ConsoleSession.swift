import Crypto
import Foundation

/// A signed-in console browser. The cookie carries 256 random bits; only their SHA-256 is stored, as
/// for admin tokens, so a copy of the database signs nobody in. The session acts with the admin token
/// it was opened with, and ends when that token is revoked.
public struct ConsoleSession: Equatable, Sendable {
    public static let cookieName = "gatehouse_console"
    static let prefix = "ghs_"
    /// Signed out after this long without a request: a console left open on a shared screen.
    public static let idleTimeout: TimeInterval = 30 * 60
    /// Signed out this long after signing in, however busy: a stolen cookie does not live forever.
    public static let lifetime: TimeInterval = 12 * 60 * 60
    /// `last_seen_at` is written at most this often: every page view would otherwise be a write.
    static let touchInterval: TimeInterval = 60

    public let hash: [UInt8]
    public let tokenID: UUID
    public let createdAt: Date
    public var lastSeenAt: Date

    public init(hash: [UInt8], tokenID: UUID, createdAt: Date, lastSeenAt: Date) {
        self.hash = hash
        self.tokenID = tokenID
        self.createdAt = createdAt
        self.lastSeenAt = lastSeenAt
    }

    /// A new session for an admitted token: the cookie value to send once, and the record to store.
    public static func open<R: RandomNumberGenerator>(
        for token: AdminToken,
        at now: Date,
        using generator: inout R
    ) -> (
        cookie: String, session: ConsoleSession
    ) {
        let cookie = prefix + RandomText.make(length: AdminToken.randomLength, alphabet: RandomText.base62, using: &generator)
        return (cookie, ConsoleSession(hash: CredentialDigest.of(cookie), tokenID: token.id, createdAt: now, lastSeenAt: now))
    }

    /// The cookie value from a `Cookie` header, when it has the shape of one we issue; anything else
    /// is no session (and costs no database lookup).
    public static func presented(inCookieHeader header: String?) -> String? {
        guard let header else { return nil }
        for pair in header.split(separator: ";") {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, parts[0].trimmingCharacters(in: .whitespaces) == cookieName else { continue }
            let value = parts[1].trimmingCharacters(in: .whitespaces)
            guard value.hasPrefix(prefix), value.count == prefix.count + AdminToken.randomLength,
                value.dropFirst(prefix.count).allSatisfy({ RandomText.base62.contains($0) })
            else { return nil }
            return value
        }
        return nil
    }

    /// Why a stored session (or its absence) does not sign the browser in.
    public enum Refusal: Error, Equatable, Sendable {
        case none, idle, expired, tokenRevoked
    }

    /// Whether the session, with the token it was opened with, is still good at `now`.
    public static func admit(_ session: ConsoleSession?, token: AdminToken?, at now: Date) -> Result<AdminToken, Refusal> {
        guard let session, let token, token.id == session.tokenID else { return .failure(.none) }
        if let revokedAt = token.revokedAt, revokedAt <= now { return .failure(.tokenRevoked) }
        if now.timeIntervalSince(session.createdAt) >= lifetime { return .failure(.expired) }
        if now.timeIntervalSince(session.lastSeenAt) >= idleTimeout { return .failure(.idle) }
        return .success(token)
    }

    /// Whether this request should move `lastSeenAt` forward.
    public func needsTouch(at now: Date) -> Bool {
        now.timeIntervalSince(lastSeenAt) >= Self.touchInterval
    }

    /// Sessions last seen before this are gone for good, whatever their start.
    public static func idleCutoff(at now: Date) -> Date {
        now.addingTimeInterval(-idleTimeout)
    }
}
