// Apps: apps with their appKey, the SDK's secretKey and the backend's server secret, and their events.
// Serves every seed: the appKey and secretKey of 000 and 002, the app backend's credential for all of them.

import Foundation
import GatehouseCore
import GatehouseStore

/// The operator's app-and-key changes, shared by the admin API and the CLI: Core decides, the store
/// persists the change with its audit entry in one transaction.
public struct AppOperations: Sendable {
    let store: any AppStore
    let auditLog: any AuditLog
    let box: SecretBox
    let clock: any GatehouseClock

    public init(store: any AppStore, auditLog: any AuditLog, box: SecretBox, clock: any GatehouseClock) {
        self.store = store
        self.auditLog = auditLog
        self.box = box
        self.clock = clock
    }

    public struct CreatedApp: Sendable {
        public let app: App
        public let secretKey: String
        public let serverSecret: String
    }

    public struct AppView: Sendable {
        public let app: App
        public let secrets: [SealedSecret]
        public let events: [RegisteredEvent]
    }

    public struct RotatedSecret: Sendable {
        public let secret: IssuedSecret
        public let previousRetiresAt: Date?
    }

    public func create(name: String, platforms: [String], origin: ChangeOrigin) async throws -> CreatedApp {
        let draft = try AppDraft(name: name, platforms: platforms)
        var generator = SystemRandomNumberGenerator()
        // appKeys are 5 characters, so a collision is possible though rare; the unique key catches it.
        for _ in 0..<8 {
            let now = clock.now()
            let app = draft.makeApp(at: now, using: &generator)
            let issued = issueInitialSecrets(for: app, at: now, box: box, using: &generator)
            let audit = origin.entry(
                at: now,
                action: "app.create",
                targetType: "app",
                targetID: app.appKey.rawValue,
                appID: app.id,
                before: nil,
                after: app.auditSnapshot
            )
            guard try await insertUnlessKeyTaken(app, secrets: issued.values.map(\.stored), audit: audit) else { continue }
            return CreatedApp(app: app, secretKey: issued[.sdk]!.plaintext, serverSecret: issued[.server]!.plaintext)
        }
        throw DomainError(.appKeySpaceBusy, "Try again.")
    }

    /// - Returns: false when the appKey was taken (nothing written), so the caller draws another.
    private func insertUnlessKeyTaken(_ app: App, secrets: [SealedSecret], audit: AuditEntry) async throws(StoreError) -> Bool {
        do {
            try await store.createApp(app, secrets: secrets, audit: audit)
            return true
        } catch {
            if case .conflict = error { return false }
            throw error
        }
    }

    public func list(after: String?, limit: Int?) async throws -> (apps: [App], nextAfter: AppKey?) {
        let pageSize = try PageSize(validating: limit)
        let afterKey = try after.map { text throws(DomainError) in try AppKey(validating: text) }
        let apps = try await store.listApps(after: afterKey, limit: pageSize.value + 1)
        let page = Array(apps.prefix(pageSize.value))
        return (page, apps.count > pageSize.value ? page.last?.appKey : nil)
    }

    public func app(_ appKey: AppKey) async throws -> App {
        guard let app = try await store.app(withKey: appKey) else {
            throw DomainError(.appNotFound, "No app has appKey '\(appKey)'.", field: "appKey")
        }
        return app
    }

    public func view(_ appKey: AppKey) async throws -> AppView {
        let app = try await app(appKey)
        return AppView(app: app, secrets: try await store.secrets(of: app.id), events: try await store.events(of: app.id))
    }

    /// Idempotent: asking for the status the app already has changes nothing and is not audited.
    public func setStatus(_ appKey: AppKey, to status: AppStatus, origin: ChangeOrigin) async throws -> App {
        let app = try await app(appKey)
        guard app.status != status else { return app }
        let now = clock.now()
        var updated = app
        updated.status = status
        updated.updatedAt = now
        let audit = origin.entry(
            at: now,
            action: status == .active ? "app.enable" : "app.disable",
            targetType: "app",
            targetID: app.appKey.rawValue,
            appID: app.id,
            before: app.auditSnapshot,
            after: updated.auditSnapshot
        )
        try await store.changeStatus(of: app, from: app.status, to: updated, audit: audit)
        return updated
    }

    public func rotate(_ appKey: AppKey, kind: SecretKind, overlapSeconds: Int?, origin: ChangeOrigin) async throws -> RotatedSecret {
        let app = try await app(appKey)
        let existing = try await store.secrets(of: app.id)
        let now = clock.now()
        var generator = SystemRandomNumberGenerator()
        let rotation = try SecretRotation.plan(
            app: app,
            kind: kind,
            existing: existing,
            overlapSeconds: overlapSeconds ?? SecretRotation.defaultOverlapSeconds,
            at: now,
            box: box,
            using: &generator
        )
        let replaced = existing.first { $0.kind == kind && $0.retiresAt == nil }
        var retiredSnapshot = replaced
        retiredSnapshot?.retiresAt = replaced.flatMap { rotation.retirements[$0.version] }
        let audit = origin.entry(
            at: now,
            action: "secret.rotate",
            targetType: "app_secret",
            targetID: "\(app.appKey)/\(kind.rawValue)",
            appID: app.id,
            before: replaced?.auditSnapshot,
            after: rotation.issued.stored.auditSnapshot
        )
        try await store.rotateSecret(rotation.issued.stored, retirements: rotation.retirements, audit: audit)
        return RotatedSecret(secret: rotation.issued, previousRetiresAt: retiredSnapshot?.retiresAt)
    }

    public func registerEvent(_ appKey: AppKey, eventID: Int, name: String, origin: ChangeOrigin) async throws -> RegisteredEvent {
        let app = try await app(appKey)
        let now = clock.now()
        let event = try RegisteredEvent.draft(app: app, eventID: eventID, name: name, at: now)
        let audit = origin.entry(
            at: now,
            action: "event.register",
            targetType: "event",
            targetID: "\(app.appKey)/\(event.eventID)",
            appID: app.id,
            before: nil,
            after: event.auditSnapshot
        )
        do {
            try await store.registerEvent(event, audit: audit)
        } catch .conflict {
            throw DomainError(
                .eventAlreadyRegistered,
                "Event \(event.eventID) is already registered for app \(app.appKey).",
                field: "eventId"
            )
        }
        return event
    }

    public func events(_ appKey: AppKey) async throws -> [RegisteredEvent] {
        try await store.events(of: try await app(appKey).id)
    }

    public struct AuditQuery: Sendable {
        public var appKey: AppKey?
        public var action: String?
        public var actor: String?
        public var from: Date?
        public var to: Date?
        public var before: Int64?
        public var limit: Int?

        public init() {}

        /// The filters of `GET /v1/admin/audit` and the console's audit page.
        public init(_ parameters: QueryParameters) throws(DomainError) {
            before = try parameters.int("before").map(Int64.init)
            if let before, before < 1 { throw DomainError(.invalidParameter, "before is a sequence number, 1 or more.", field: "before") }
            appKey = try parameters.string("appKey").map { text throws(DomainError) in try AppKey(validating: text) }
            action = parameters.string("action")
            actor = parameters.string("actor")
            from = try parameters.date("from")
            to = try parameters.date("to")
            limit = try parameters.int("limit")
        }
    }

    public func audit(_ query: AuditQuery) async throws -> (records: [AuditRecord], nextBefore: Int64?) {
        let pageSize = try PageSize(validating: query.limit)
        var filter = AuditFilter()
        if let appKey = query.appKey { filter.appID = try await app(appKey).id }
        filter.action = try query.action.map { text throws(DomainError) in
            guard AuditAction.isWellFormed(text) else {
                throw DomainError(.invalidParameter, "action is an audit action such as app.create (docs/api.md).", field: "action")
            }
            return text
        }
        filter.actor = try query.actor.map { text throws(DomainError) in
            // Names as admin tokens take them (1 to 100 characters, no control character): nothing
            // else is in the log, and PostgreSQL refuses a NUL in text outright.
            guard let actor = Actor(text), (1...100).contains(actor.name.unicodeScalars.count), !actor.name.hasControlCharacters else {
                throw DomainError(.invalidParameter, "actor is admin-token:<name> or cli:<user>.", field: "actor")
            }
            return actor
        }
        filter.from = query.from
        filter.to = query.to
        let records = try await auditLog.auditRecords(matching: filter, before: query.before, limit: pageSize.value + 1)
        let page = Array(records.prefix(pageSize.value))
        return (page, records.count > pageSize.value ? page.last?.sequence : nil)
    }

    /// Checks an appKey and server secret pair however it arrived (Basic, or siteverify's `secret`).
    public func admitBackend(appKey: AppKey, secret: String) async throws -> Result<(app: App, secretVersion: Int), BackendCredentials.Refusal> {
        let found = try await store.appWithSecrets(withKey: appKey)
        return BackendCredentials.admit(app: found?.app, secrets: found?.secrets ?? [], presentedSecret: secret, at: clock.now(), box: box)
            .map { (found!.app, $0) }
    }

    /// `admitBackend(appKey:secret:)` from this instance's copy of the app alone: the app and the
    /// version when the credential admits it, nil for a refusal and when there is no fresh copy (the
    /// path that reads the database then answers).
    public func admitBackendInMemory(appKey: AppKey, secret: String) -> (app: App, secretVersion: Int)? {
        guard let found = store.appWithSecretsInMemory(withKey: appKey),
            case .success(let version) = BackendCredentials.admit(
                app: found.app,
                secrets: found.secrets,
                presentedSecret: secret,
                at: clock.now(),
                box: box
            )
        else { return nil }
        return (found.app, version)
    }
}

extension AppOperations {
    /// Over the whole store: apps from their own store, the audit log from the operators'.
    public init(store: SQLStore, box: SecretBox, clock: any GatehouseClock) {
        self.init(store: store.apps, auditLog: store.admin, box: box, clock: clock)
    }
}
