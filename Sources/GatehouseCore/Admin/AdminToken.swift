// Admin: operators' admin tokens, the append-only audit log and the master key.
// Serves the operators of every seed's server half; no SDK calls it.

import Crypto
import Foundation

/// An operator's bearer token. Only its SHA-256 is stored: the token has 256 bits of entropy, so a
/// plain hash cannot be brute-forced and lets the token be found by an indexed lookup.
public struct AdminToken: Equatable, Sendable {
    public static let prefix = "gat_"
    static let randomLength = 43

    public let id: UUID
    public let name: String
    public let hash: [UInt8]
    public let createdAt: Date
    public var revokedAt: Date?
    public let role: AdminRole

    public init(id: UUID, name: String, hash: [UInt8], createdAt: Date, revokedAt: Date?, role: AdminRole) {
        self.id = id
        self.name = name
        self.hash = hash
        self.createdAt = createdAt
        self.revokedAt = revokedAt
        self.role = role
    }

    /// A new token: the plaintext to print once, and the record to store.
    public static func issue<R: RandomNumberGenerator>(
        name: String,
        role: AdminRole = .admin,
        at now: Date,
        using generator: inout R
    ) throws(DomainError) -> (plaintext: String, record: AdminToken) {
        let checkedName = try AppDraft.checkedName(name, code: .invalidTokenName, field: "name")
        let plaintext = prefix + RandomText.make(length: randomLength, alphabet: RandomText.base62, using: &generator)
        return (
            plaintext,
            AdminToken(id: UUID.random(), name: checkedName, hash: CredentialDigest.of(plaintext), createdAt: now, revokedAt: nil, role: role)
        )
    }

    /// Why a presented `Authorization` header does not authenticate an operator.
    public enum Refusal: String, Error, Sendable, Equatable {
        case missing = "admin_token_missing"
        case malformed = "admin_token_malformed"
        case unknown = "admin_token_unknown"
        case revoked = "admin_token_revoked"

        public var detail: String {
            switch self {
            case .missing: "Send an admin token as 'Authorization: Bearer gat_...'."
            case .malformed: "The Authorization header is not 'Bearer gat_' followed by 43 letters and digits."
            case .unknown: "No admin token matches the one presented."
            case .revoked: "This admin token was revoked."
            }
        }
    }

    /// Extracts the token from an `Authorization` header value, or says why it cannot.
    public static func presented(inAuthorization header: String?) -> Result<String, Refusal> {
        guard let header, !header.isEmpty else { return .failure(.missing) }
        let parts = header.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count == 2, parts[0].lowercased() == "bearer" else { return .failure(.malformed) }
        return presented(String(parts[1]))
    }

    /// The token as typed (the console's sign-in form), when it has a token's shape.
    public static func presented(_ token: String) -> Result<String, Refusal> {
        guard !token.isEmpty else { return .failure(.missing) }
        guard token.hasPrefix(prefix), token.count == prefix.count + randomLength,
            token.dropFirst(prefix.count).allSatisfy({ RandomText.base62.contains($0) })
        else { return .failure(.malformed) }
        return .success(token)
    }

    /// Decides whether the stored record (found by hash, or not) admits the caller.
    public static func admit(_ record: AdminToken?, at now: Date) -> Result<AdminToken, Refusal> {
        guard let record else { return .failure(.unknown) }
        if let revokedAt = record.revokedAt, revokedAt <= now { return .failure(.revoked) }
        return .success(record)
    }
}

/// What an admin token may do: `admin` everything; `viewer` reads only, in the API, the CLI's view of
/// it and the console, so that people who watch the service need no power to change it.
public enum AdminRole: String, Sendable, CaseIterable, Equatable {
    case admin, viewer

    public func permits(_ access: AdminAccess) -> Bool {
        self == .admin || access == .read
    }

    /// `admin` or `viewer`, or `invalid_role`.
    public init(validating text: String) throws(DomainError) {
        guard let role = AdminRole(rawValue: text) else {
            throw DomainError(.invalidAdminRole, "The role is 'admin' or 'viewer'.", field: "role")
        }
        self = role
    }
}

/// What a route does with the operators' data: reads it, or changes it.
public enum AdminAccess: Sendable, Equatable {
    case read, write
}
