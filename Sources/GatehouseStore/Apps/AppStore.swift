// Apps: apps with their appKey, the SDK's secretKey and the backend's server secret, and their events.
// Serves every seed: the appKey and secretKey of 000 and 002, the app backend's credential for all of them.

import Foundation
import GatehouseCore

/// Apps with their sealed secrets and registered events. Every change takes the audit entry that
/// describes it and writes both in one transaction.
public protocol AppStore: Sendable {
    /// Fails with `.conflict` when the appKey is taken; nothing is written then.
    func createApp(_ app: App, secrets: [SealedSecret], audit: AuditEntry) async throws(StoreError)
    func app(withKey appKey: AppKey) async throws(StoreError) -> App?
    /// Apps ordered by appKey, starting after `after`.
    func listApps(after: AppKey?, limit: Int) async throws(StoreError) -> [App]
    /// Changes the status only if it still is `from`; `.conflict` if another change came first.
    func changeStatus(of app: App, from: AppStatus, to updated: App, audit: AuditEntry) async throws(StoreError)
    func secrets(of appID: AppID) async throws(StoreError) -> [SealedSecret]
    /// The app with its secrets, as `app(withKey:)` then `secrets(of:)` would give them. Every request
    /// asks this, so it may come from the instance's copy: a change made through another instance is
    /// seen within `SQLStore.cacheLifetime`.
    func appWithSecrets(withKey appKey: AppKey) async throws(StoreError) -> (app: App, secrets: [SealedSecret])?
    /// The instance's fresh copy of `appWithSecrets(withKey:)`, without reading the database: nil when
    /// there is none (which says nothing of whether the app exists).
    func appWithSecretsInMemory(withKey appKey: AppKey) -> (app: App, secrets: [SealedSecret])?
    /// Stores a new secret version and the new end of life of older versions. `.conflict` if a
    /// concurrent rotation took this version number first.
    func rotateSecret(_ secret: SealedSecret, retirements: [Int: Date], audit: AuditEntry) async throws(StoreError)
    /// `.conflict` if the event is already registered for the app.
    func registerEvent(_ event: RegisteredEvent, audit: AuditEntry) async throws(StoreError)
    func events(of appID: AppID) async throws(StoreError) -> [RegisteredEvent]
}
