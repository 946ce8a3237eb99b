// DeviceRisk: device start, a ztoken per event, and the app backend's risk query that consumes it.
// Serves seed 002 (the device-risk SDK: appKey + secretKey, events 3300-3400, the H5 bridge).

import Foundation
import GatehouseCore
import GatehouseStore

/// The operator's side of device risk: settings, rules, lists, devices and the decision log.
public struct RiskAdminOperations: Sendable {
    let store: any DeviceRiskStore
    let apps: AppOperations
    let clock: any GatehouseClock

    public init(store: any DeviceRiskStore, apps: AppOperations, clock: any GatehouseClock) {
        self.store = store
        self.apps = apps
        self.clock = clock
    }

    public func updateSettings(_ appKey: AppKey, ztokenTTLSeconds: Int?, retentionDays: Int?, origin: ChangeOrigin) async throws -> App {
        let app = try await apps.app(appKey)
        var updated = app
        updated.settings = try app.settings.changing(ztokenTTLSeconds: ztokenTTLSeconds, retentionDays: retentionDays)
        guard updated.settings != app.settings else { return app }
        updated.updatedAt = clock.now()
        let audit = origin.entry(
            at: updated.updatedAt,
            action: "app.settings",
            targetType: "app",
            targetID: app.appKey.rawValue,
            appID: app.id,
            before: app.auditSnapshot,
            after: updated.auditSnapshot
        )
        try await store.updateSettings(of: app, to: updated, audit: audit)
        return updated
    }

    public struct RulesView: Sendable {
        public let app: App
        public let appRules: RiskRules?
        public let appEffective: EffectiveRiskRules
        public let events: [(event: RegisteredEvent, rules: RiskRules?, effective: EffectiveRiskRules)]
    }

    public func rules(_ appKey: AppKey) async throws -> RulesView {
        let app = try await apps.app(appKey)
        let stored = try await store.riskRules(appID: app.id)
        var events: [(event: RegisteredEvent, rules: RiskRules?, effective: EffectiveRiskRules)] = []
        for event in try await apps.store.events(of: app.id) {
            let own = stored[event.eventID.rawValue]
            events.append((event, own, RiskRules.effective(app: stored[0], event: own)))
        }
        return RulesView(app: app, appRules: stored[0], appEffective: RiskRules.effective(app: stored[0], event: nil), events: events)
    }

    /// Replaces the app's rules (eventID nil) or one registered event's.
    public func setRules(_ appKey: AppKey, eventID: Int?, rules: RiskRules, origin: ChangeOrigin) async throws -> RulesView {
        let app = try await apps.app(appKey)
        let validated = try rules.validated()
        let events = try await apps.store.events(of: app.id)
        var scope = 0
        if let eventID {
            let event = try EventID(validating: eventID)
            guard events.contains(where: { $0.eventID == event }) else {
                throw DomainError(.eventNotFound, "Event \(event) is not registered for \(appKey).")
            }
            scope = event.rawValue
        }
        let before = try await store.riskRules(appID: app.id)[scope]
        let now = clock.now()
        let audit = origin.entry(
            at: now,
            action: "risk.rules",
            targetType: "risk_rules",
            targetID: scope == 0 ? appKey.rawValue : "\(appKey)/\(scope)",
            appID: app.id,
            before: before.map(Self.snapshot),
            after: Self.snapshot(validated)
        )
        try await store.setRiskRules(appID: app.id, scope: scope, rules: validated, at: now, audit: audit)
        return try await self.rules(appKey)
    }

    public func addListEntry(
        _ appKey: AppKey,
        list: String,
        type: String,
        value: String,
        note: String?,
        origin: ChangeOrigin
    )
        async throws -> RiskListEntry
    {
        let app = try await apps.app(appKey)
        let entry = try RiskListEntry.draft(app: app, kind: list, subject: type, value: value, note: note, at: clock.now())
        let audit = origin.entry(
            at: entry.createdAt,
            action: "risk.list.add",
            targetType: "risk_list_entry",
            targetID: entry.id.text,
            appID: app.id,
            before: nil,
            after: Self.snapshot(entry)
        )
        do {
            try await store.addListEntry(entry, audit: audit)
        } catch .conflict {
            throw DomainError(.listEntryExists, "\(entry.subject.rawValue) \(entry.value) is already on the \(entry.kind.rawValue) list.")
        }
        return entry
    }

    public func listEntries(_ appKey: AppKey) async throws -> [RiskListEntry] {
        try await store.listEntries(appID: try await apps.app(appKey).id)
    }

    public func removeListEntry(_ appKey: AppKey, entryID: String, origin: ChangeOrigin) async throws {
        let app = try await apps.app(appKey)
        let notFound = DomainError(.listEntryNotFound, "No list entry \(entryID) for \(appKey).")
        guard let id = UUID(uuidString: entryID), let entry = try await store.listEntries(appID: app.id).first(where: { $0.id == id }) else {
            throw notFound
        }
        let audit = origin.entry(
            at: clock.now(),
            action: "risk.list.remove",
            targetType: "risk_list_entry",
            targetID: entryID.lowercased(),
            appID: app.id,
            before: Self.snapshot(entry),
            after: nil
        )
        do {
            try await store.removeListEntry(appID: app.id, id: id, audit: audit)
        } catch {
            if case .notFound = error { throw notFound }
            throw error
        }
    }

    public func device(_ appKey: AppKey, deviceID: String) async throws -> Device {
        let app = try await apps.app(appKey)
        guard let device = try await store.device(appID: app.id, id: try DeviceID(validating: deviceID)) else {
            throw DomainError(.deviceNotFound, "No device \(deviceID) for \(appKey).")
        }
        return device
    }

    public struct DecisionQuery: Sendable {
        public var appKey: AppKey?
        public var eventID: Int?
        public var deviceID: String?
        public var accountID: String?
        public var decision: String?
        public var from: Date?
        public var to: Date?
        public var cursor: String?
        public var limit: Int?
        public var tag: String?
        public var address: String?
        public var label: String?

        public init() {}

        /// The filters of `GET /v1/admin/risk/decisions` and the console's explorer.
        public init(_ parameters: QueryParameters) throws(DomainError) {
            appKey = try parameters.string("appKey").map { text throws(DomainError) in try AppKey(validating: text) }
            eventID = try parameters.int("eventId")
            deviceID = parameters.string("deviceId")
            accountID = parameters.string("accountId")
            decision = parameters.string("decision")
            tag = parameters.string("tag")
            address = parameters.string("address")
            label = parameters.string("label")
            from = try parameters.date("from")
            to = try parameters.date("to")
            cursor = parameters.string("cursor")
            limit = try parameters.int("limit")
        }
    }

    public func decisions(_ query: DecisionQuery) async throws -> (decisions: [ListedDecision], next: String?) {
        let pageSize = try PageSize(validating: query.limit)
        var filter = DecisionFilter()
        if let appKey = query.appKey {
            filter.appID = try await apps.app(appKey).id
        }
        filter.eventID = try query.eventID.map { value throws(DomainError) in try EventID(validating: value) }
        filter.deviceID = try query.deviceID.map { value throws(DomainError) in try DeviceID(validating: value) }
        filter.accountID = try query.accountID.map { value throws(DomainError) in try AccountID(validating: value) }
        if let decision = query.decision {
            guard let parsed = RiskDecision(rawValue: decision) else {
                throw DomainError(.invalidParameter, "decision is pass, review or reject.", field: "decision")
            }
            filter.decision = parsed
        }
        filter.from = query.from
        filter.to = query.to
        filter.tag = try query.tag.map { text throws(DomainError) in
            guard let tag = RiskTag(rawValue: text) else {
                throw DomainError(.invalidParameter, "tag is one of the risk tags (docs/risk.md).", field: "tag")
            }
            return tag
        }
        filter.clientAddress = try query.address.map { text throws(DomainError) in try Self.addressFilter(text) }
        if let label = query.label {
            guard let parsed = DecisionLabel.Verdict(rawValue: label) else {
                throw DomainError(.invalidParameter, "label is fraud or legitimate.", field: "label")
            }
            filter.label = parsed
        }
        let cursor = try query.cursor.map(Self.parseCursor)
        let listed = try await store.decisions(matching: filter, after: cursor, limit: pageSize.value + 1)
        let page = Array(listed.prefix(pageSize.value))
        let next =
            listed.count > pageSize.value
            ? page.last.map { "\($0.record.decidedAt.millisecondsSince1970)_\($0.record.id.text)" } : nil
        return (page, next)
    }

    /// One decision in full, with its tags and reasons.
    public func decision(_ appKey: AppKey, id: String) async throws -> RiskDecisionRecord {
        let app = try await apps.app(appKey)
        guard let uuid = UUID(uuidString: id), let record = try await store.decision(appID: app.id, id: uuid) else {
            throw DomainError(.decisionNotFound, "No decision \(id) for \(appKey).")
        }
        return record
    }

    /// The `address` filter as decisions record it (`IPAddress`'s text).
    static func addressFilter(_ text: String) throws(DomainError) -> String {
        guard let address = IPAddress(text) else { throw DomainError(.invalidIPAddress, "address is an IPv4 or IPv6 address.", field: "address") }
        return address.description
    }

    static func parseCursor(_ text: String) throws -> DecisionCursor {
        let parts = text.split(separator: "_", maxSplits: 1).map(String.init)
        guard parts.count == 2, let milliseconds = Int64(parts[0]), let id = UUID(uuidString: parts[1]) else {
            throw DomainError(.invalidParameter, "cursor is the nextCursor of a previous page.", field: "cursor")
        }
        return DecisionCursor(decidedAt: Date(millisecondsSince1970: milliseconds), id: id)
    }

    static func snapshot(_ rules: RiskRules) -> AuditSnapshot {
        var snapshot: AuditSnapshot = [:]
        let values: [(String, Int?)] = [
            ("reviewAt", rules.reviewAt), ("rejectAt", rules.rejectAt), ("maxDeviceEventsPerMinute", rules.maxDeviceEventsPerMinute),
            ("maxDeviceAccountsPerDay", rules.maxDeviceAccountsPerDay), ("maxAccountDevicesPerDay", rules.maxAccountDevicesPerDay),
            ("maxIPDevicesPerHour", rules.maxIPDevicesPerHour), ("maxAddressAttestationsPerHour", rules.maxAddressAttestationsPerHour),
            ("maxNetworkAttestationsPerHour", rules.maxNetworkAttestationsPerHour),
            ("maxAccountAttestationsPerDay", rules.maxAccountAttestationsPerDay),
        ]
        for (name, value) in values { if let value { snapshot[name] = .int(value) } }
        for (tag, weight) in rules.weights ?? [:] { snapshot["weight:\(tag)"] = .int(weight) }
        return snapshot
    }

    static func snapshot(_ entry: RiskListEntry) -> AuditSnapshot {
        ["list": .string(entry.kind.rawValue), "type": .string(entry.subject.rawValue), "value": .string(entry.value)]
    }
}
