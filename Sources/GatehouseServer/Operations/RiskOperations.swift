import Foundation
import GatehouseCore
import GatehouseStore

/// Risk queries from the app's backend, and the operator's rules, lists, settings and decision log.
public struct RiskOperations: Sendable {
    let store: any GatehouseStore
    let apps: AppOperations
    let keys: ServerKeys
    let clock: any GatehouseClock

    public init(store: any GatehouseStore, box: SecretBox, clock: any GatehouseClock) {
        self.store = store
        self.apps = AppOperations(store: store, box: box, clock: clock)
        self.keys = ServerKeys(box: box)
        self.clock = clock
    }

    public struct Query: Sendable {
        public var ztoken: String
        public var eventID: Int
        public var accountID: String
        public var clientIP: String
        public var userAgent: String?

        public init(ztoken: String, eventID: Int, accountID: String, clientIP: String, userAgent: String?) {
            self.ztoken = ztoken
            self.eventID = eventID
            self.accountID = accountID
            self.clientIP = clientIP
            self.userAgent = userAgent
        }
    }

    public struct Outcome: Sendable {
        public let record: RiskDecisionRecord
        public let device: Device?
    }

    /// Checks the token without I/O, then consumes it, gathers signals and stores the decision in one
    /// transaction. A forged token never reaches the ztoken table.
    public func query(_ query: Query, app: App) async throws -> Outcome {
        let event = try EventID(validating: query.eventID)
        let account = try AccountID(validating: query.accountID)
        guard let address = IPAddress(query.clientIP) else {
            throw DomainError(.invalidIPAddress, "clientIp is an IPv4 or IPv6 address.", field: "clientIp")
        }
        if let agent = query.userAgent, agent.unicodeScalars.count > 512 || agent.hasControlCharacters {
            throw DomainError(.invalidDeviceData, "userAgent is at most 512 characters without control characters.", field: "userAgent")
        }
        // Anything up to 512 characters gets a decision (a malformed token is `forged`); longer is no token.
        guard (1...512).contains(query.ztoken.unicodeScalars.count) else {
            throw DomainError(.invalidZToken, "ztoken is 1 to 512 characters.", field: "ztoken")
        }
        let now = clock.now()
        let (checked, claims) = ZToken.check(query.ztoken, app: app.id, event: event, account: account, at: now, key: keys.ztoken)
        let consumes = checked == .fresh
        let keys = RiskQueryKeys(
            appID: app.id,
            eventID: event,
            accountID: account,
            tokenID: consumes ? claims?.tokenID : nil,
            deviceID: consumes ? claims?.deviceID : nil,
            clientAddress: address.description,
            now: now
        )
        let recorded = try await store.recordRiskDecision(keys) { context in
            var state = checked
            var issuedFrom: String?
            var pageURL: String?
            switch context.consumption {
            case .consumed(let from, let url): (issuedFrom, pageURL) = (from, url)
            case .alreadyConsumed(let from, let url): (state, issuedFrom, pageURL) = (.replayed, from, url)
            case .missing: state = .forged
            case nil: break
            }
            let hits = context.listEntries.filter { $0.matches(device: context.device?.id ?? claims?.deviceID, account: account, address: address) }
            let inputs = RiskInputs(
                tokenState: state,
                device: context.device,
                velocity: context.velocity,
                issuedFrom: issuedFrom,
                clientAddress: address.description,
                listHits: hits
            )
            let verdict = RiskEngine.judge(inputs, rules: RiskRules.effective(app: context.appRules, event: context.eventRules))
            return RiskDecisionRecord(
                id: UUID(),
                appID: app.id,
                eventID: event,
                accountID: account,
                deviceID: claims?.deviceID,
                tokenID: claims?.tokenID,
                tokenState: state,
                clientAddress: address.description,
                userAgent: query.userAgent,
                pageURL: pageURL,
                verdict: verdict,
                decidedAt: now
            )
        }
        return Outcome(record: recorded.record, device: recorded.context.device)
    }

    public func decision(app: App, id: String) async throws -> RiskDecisionRecord {
        guard let uuid = UUID(uuidString: id), let record = try await store.decision(appID: app.id, id: uuid) else {
            throw Problem(.notFound, code: "decision_not_found", title: "Decision not found", detail: "No decision \(id) for this app.")
        }
        return record
    }

    // MARK: Operators

    public func updateSettings(_ appKey: String, ztokenTTLSeconds: Int?, retentionDays: Int?, origin: ChangeOrigin) async throws -> App {
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

    public func rules(_ appKey: String) async throws -> RulesView {
        let app = try await apps.app(appKey)
        let stored = try await store.riskRules(appID: app.id)
        var events: [(event: RegisteredEvent, rules: RiskRules?, effective: EffectiveRiskRules)] = []
        for event in try await store.events(of: app.id) {
            let own = stored[event.eventID.rawValue]
            events.append((event, own, RiskRules.effective(app: stored[0], event: own)))
        }
        return RulesView(app: app, appRules: stored[0], appEffective: RiskRules.effective(app: stored[0], event: nil), events: events)
    }

    /// Replaces the app's rules (eventID nil) or one registered event's.
    public func setRules(_ appKey: String, eventID: Int?, rules: RiskRules, origin: ChangeOrigin) async throws -> RulesView {
        let app = try await apps.app(appKey)
        let validated = try rules.validated()
        let events = try await store.events(of: app.id)
        var scope = 0
        if let eventID {
            let event = try EventID(validating: eventID)
            guard events.contains(where: { $0.eventID == event }) else {
                throw Problem(.notFound, code: "event_not_found", title: "Event not found", detail: "Event \(event) is not registered for \(appKey).")
            }
            scope = event.rawValue
        }
        let before = try await store.riskRules(appID: app.id)[scope]
        let now = clock.now()
        let audit = origin.entry(
            at: now,
            action: "risk.rules",
            targetType: "risk_rules",
            targetID: scope == 0 ? appKey : "\(appKey)/\(scope)",
            appID: app.id,
            before: before.map(Self.snapshot),
            after: Self.snapshot(validated)
        )
        try await store.setRiskRules(appID: app.id, scope: scope, rules: validated, at: now, audit: audit)
        return try await self.rules(appKey)
    }

    public func addListEntry(
        _ appKey: String,
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
            targetID: entry.id.uuidString.lowercased(),
            appID: app.id,
            before: nil,
            after: Self.snapshot(entry)
        )
        do {
            try await store.addListEntry(entry, audit: audit)
        } catch .conflict {
            throw Problem(
                .conflict,
                code: "list_entry_exists",
                title: "Already listed",
                detail: "\(entry.subject.rawValue) \(entry.value) is already on the \(entry.kind.rawValue) list."
            )
        }
        return entry
    }

    public func listEntries(_ appKey: String) async throws -> [RiskListEntry] {
        try await store.listEntries(appID: try await apps.app(appKey).id)
    }

    public func removeListEntry(_ appKey: String, entryID: String, origin: ChangeOrigin) async throws {
        let app = try await apps.app(appKey)
        let notFound = Problem(.notFound, code: "list_entry_not_found", title: "No such entry", detail: "No list entry \(entryID) for \(appKey).")
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

    public func device(_ appKey: String, deviceID: String) async throws -> Device {
        let app = try await apps.app(appKey)
        guard let device = try await store.device(appID: app.id, id: try DeviceID(validating: deviceID)) else {
            throw Problem(.notFound, code: "device_not_found", title: "Device not found", detail: "No device \(deviceID) for \(appKey).")
        }
        return device
    }

    public struct DecisionQuery: Sendable {
        public var appKey: String?
        public var eventID: Int?
        public var deviceID: String?
        public var accountID: String?
        public var decision: String?
        public var from: Date?
        public var to: Date?
        public var cursor: String?
        public var limit: Int?

        public init() {}
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
                throw Problem.badParameter("decision", "decision is pass, review or reject.")
            }
            filter.decision = parsed
        }
        filter.from = query.from
        filter.to = query.to
        let cursor = try query.cursor.map(Self.parseCursor)
        let listed = try await store.decisions(matching: filter, after: cursor, limit: pageSize.value + 1)
        let page = Array(listed.prefix(pageSize.value))
        let next =
            listed.count > pageSize.value
            ? page.last.map { "\($0.record.decidedAt.millisecondsSince1970)_\($0.record.id.uuidString.lowercased())" } : nil
        return (page, next)
    }

    static func parseCursor(_ text: String) throws -> DecisionCursor {
        let parts = text.split(separator: "_", maxSplits: 1).map(String.init)
        guard parts.count == 2, let milliseconds = Int64(parts[0]), let id = UUID(uuidString: parts[1]) else {
            throw Problem.badParameter("cursor", "cursor is the nextCursor of a previous page.")
        }
        return DecisionCursor(decidedAt: Date(millisecondsSince1970: milliseconds), id: id)
    }

    static func snapshot(_ rules: RiskRules) -> AuditSnapshot {
        var snapshot: AuditSnapshot = [:]
        let values: [(String, Int?)] = [
            ("reviewAt", rules.reviewAt), ("rejectAt", rules.rejectAt), ("maxDeviceEventsPerMinute", rules.maxDeviceEventsPerMinute),
            ("maxDeviceAccountsPerDay", rules.maxDeviceAccountsPerDay), ("maxAccountDevicesPerDay", rules.maxAccountDevicesPerDay),
            ("maxIPDevicesPerHour", rules.maxIPDevicesPerHour),
        ]
        for (name, value) in values { if let value { snapshot[name] = .int(value) } }
        for (tag, weight) in rules.weights ?? [:] { snapshot["weight:\(tag)"] = .int(weight) }
        return snapshot
    }

    static func snapshot(_ entry: RiskListEntry) -> AuditSnapshot {
        ["list": .string(entry.kind.rawValue), "type": .string(entry.subject.rawValue), "value": .string(entry.value)]
    }
}
