// Attestation: attesters, proof-of-work challenges, attestation tokens (JWT, token binding), the gate.
// Serves seeds 001 (HTTP 428, EO-Attest-Token) and 003 (Approov-Token, pay binding, dynamic configuration).

import Foundation
import GatehouseCore

/// An attester as stored: the policy, its sealed HS256 secret when it signs with one, and a
/// `playIntegrity` attester's sealed credentials (`PlayIntegrityCredentials`).
public struct StoredAttester: Sendable, Equatable {
    public let attester: Attester
    public let sealedSecret: [UInt8]?
    public let sealedCredentials: [UInt8]?

    public init(attester: Attester, sealedSecret: [UInt8]?, sealedCredentials: [UInt8]? = nil) {
        self.attester = attester
        self.sealedSecret = sealedSecret
        self.sealedCredentials = sealedCredentials
    }
}

/// A signing key as stored: its private scalar sealed with the master key.
public struct StoredSigningKey: Sendable, Equatable {
    public let kid: String
    public let sealedKey: [UInt8]
    public let createdAt: Date
    public let retiredAt: Date?

    public init(kid: String, sealedKey: [UInt8], createdAt: Date, retiredAt: Date?) {
        self.kid = kid
        self.sealedKey = sealedKey
        self.createdAt = createdAt
        self.retiredAt = retiredAt
    }
}

/// The SDK configuration's stored part: its version and the protected hosts.
public struct StoredSDKConfig: Sendable, Equatable {
    public let version: Int64
    public let protectedHosts: [ProtectedHost]
}

/// What client attestation persists.
public protocol AttestationStore: Sendable {
    /// Fails with `.conflict` when the app already has this attestId.
    func createAttester(_ attester: StoredAttester, audit: AuditEntry) async throws(StoreError)
    /// Replaces the attester's settings if it still reads as `from` (else `.conflict`).
    func updateAttester(from: Attester, to updated: StoredAttester, audit: AuditEntry) async throws(StoreError)
    func attester(appID: AppID, attestID: AttestID) async throws(StoreError) -> StoredAttester?
    /// May come from the instance's copy, like `appWithSecrets(withKey:)`.
    func attesters(appID: AppID) async throws(StoreError) -> [StoredAttester]
    /// The instance's fresh copy of `attesters(appID:)`, without reading the database; nil when there is none.
    func attestersInMemory(appID: AppID) -> [StoredAttester]?

    /// Every signing key whose retirement is later than `publishedAfter` (or that is not retired).
    func signingKeys(publishedAfter: Date) async throws(StoreError) -> [StoredSigningKey]
    /// Inserts `key` as the active key unless one is active already; true if it was inserted.
    func insertFirstSigningKey(_ key: StoredSigningKey) async throws(StoreError) -> Bool
    /// Retires the active key at `key.createdAt` and makes `key` active, atomically.
    func rotateSigningKey(to key: StoredSigningKey, audit: AuditEntry) async throws(StoreError)

    /// Remembers a solved challenge until it expires; false if it was already used. `expiresAt` is
    /// the challenge's own (signed) expiry: on PostgreSQL the key is unique together with it.
    func useSolution(appID: AppID, replayKey: String, expiresAt: Date) async throws(StoreError) -> Bool
    /// Counts one use of a limited-use token; false once `limit` uses were counted.
    func useToken(appID: AppID, jti: String, limit: Int, expiresAt: Date) async throws(StoreError) -> Bool

    func recentActivity(appID: AppID, deviceID: DeviceID, at now: Date) async throws(StoreError) -> RecentDeviceActivity

    func sdkConfig(appID: AppID) async throws(StoreError) -> StoredSDKConfig
    func setProtectedHosts(appID: AppID, hosts: [ProtectedHost], at now: Date, audit: AuditEntry) async throws(StoreError) -> StoredSDKConfig
}
