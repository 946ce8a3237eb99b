// DeviceRisk: device start, a ztoken per event, and the app backend's risk query that consumes it.
// Serves seed 002 (the device-risk SDK: appKey + secretKey, events 3300-3400, the H5 bridge).

import Foundation
import GatehouseCore

/// Filters for the admin's decision listing; nil means any.
public struct DecisionFilter: Sendable {
    public var appID: AppID?
    public var eventID: EventID?
    public var deviceID: DeviceID?
    public var accountID: AccountID?
    public var decision: RiskDecision?
    public var from: Date?
    public var to: Date?
    /// Decisions that carry this tag among their hits.
    public var tag: RiskTag?
    /// The client address as the risk query recorded it (`IPAddress`'s text).
    public var clientAddress: String?
    /// Decisions whose last label is this one.
    public var label: DecisionLabel.Verdict?

    public init(
        appID: AppID? = nil,
        eventID: EventID? = nil,
        deviceID: DeviceID? = nil,
        accountID: AccountID? = nil,
        decision: RiskDecision? = nil,
        from: Date? = nil,
        to: Date? = nil
    ) {
        self.appID = appID
        self.eventID = eventID
        self.deviceID = deviceID
        self.accountID = accountID
        self.decision = decision
        self.from = from
        self.to = to
    }
}

/// Where a replay's reading of the decisions got to: the last one's time as the database wrote it (a
/// time read into a `Date` and bound again can move by a microsecond on PostgreSQL, which would read a
/// decision twice or skip one) and its id.
public struct StoredPosition: Sendable, Equatable {
    let at: String
    let id: UUID
}

/// A position in the decision listing: the last item's time and id.
public struct DecisionCursor: Sendable, Equatable {
    public let decidedAt: Date
    public let id: UUID

    public init(decidedAt: Date, id: UUID) {
        self.decidedAt = decidedAt
        self.id = id
    }
}

/// Devices, nonces, ztokens, risk decisions, rules and lists.
public protocol DeviceRiskStore: ActivityCounting {
    /// Inserts or refreshes a device; keeps its first-seen time. Returns the stored device.
    func upsertDevice(_ device: Device) async throws(StoreError) -> Device
    func device(appID: AppID, id: DeviceID) async throws(StoreError) -> Device?
    /// Records a nonce until `expiresAt`; false if it was already used. `expiresAt` must follow from
    /// what the nonce was signed with (its request's timestamp): on PostgreSQL the nonce is unique
    /// together with its expiry, the key of its time range.
    func useNonce(appID: AppID, nonce: String, expiresAt: Date) async throws(StoreError) -> Bool
    /// Whether the event is registered for the app, and the key epoch of the device (nil when it has
    /// not started), in one round trip: what a ztoken minted by the server needs.
    func issuancePreconditions(
        appID: AppID,
        eventID: EventID,
        deviceID: DeviceID
    ) async throws(StoreError)
        -> (eventRegistered: Bool, keyEpoch: Int?)
    /// Notes the page a bridge ztoken was minted for, until the token expires.
    func recordZTokenPage(appID: AppID, tokenID: String, pageURL: String, expiresAt: Date) async throws(StoreError)
    /// The app's registered event ids.
    func registeredEvents(appID: AppID) async throws(StoreError) -> Set<Int>
    /// Reads what the judge needs, then consumes the token and stores Core's decision (`RiskEngine.decide`) in one
    /// transaction (a group commit): concurrent queries with one token see exactly one `.consumed`,
    /// and the decision has committed when this returns. Without a token to consume the decision is
    /// the only write and is written behind the answer (`decisionsBehind`); a read of decisions on
    /// this instance waits for it. Rules and lists may come from the instance's copy (`SQLStore.cacheLifetime`).
    func recordRiskDecision(_ query: RiskQuery) async throws -> RecordedRiskDecision
    /// `recordRiskDecision` for a query whose token was refused before any read (`tokenState` not
    /// `fresh`), judged by `policy`: no I/O, the decision written behind.
    func recordRefusedDecision(_ query: RiskQuery, policy: RiskPolicy) -> RecordedRiskDecision
    /// The instance's fresh copy of the app's risk policy, without reading the database; nil when there is none.
    func riskPolicyInMemory(appID: AppID) -> RiskPolicy?
    func decision(appID: AppID, id: UUID) async throws(StoreError) -> RiskDecisionRecord?
    /// Gives the decision its label (the last one stands) and appends the audit entry, in one
    /// transaction; `.notFound` when the app has no such decision, `.conflict` when it has taken
    /// `DecisionLabel.maximumPerDecision` labels. Returns the labelled decision.
    func labelDecision(appID: AppID, id: UUID, label: DecisionLabel, audit: AuditEntry) async throws(StoreError) -> RiskDecisionRecord
    /// Newest first, strictly after `cursor` in that order, each with its app's appKey.
    func decisions(matching filter: DecisionFilter, after cursor: DecisionCursor?, limit: Int) async throws(StoreError) -> [ListedDecision]
    /// Refused decisions counted instead of stored (`RefusedDecisionSampler`): newest minute first,
    /// strictly after `cursor` in that order, each with its app's appKey.
    func refusedCounts(
        matching filter: RefusedCountFilter,
        after cursor: RefusedCountCursor?,
        limit: Int
    ) async throws(StoreError)
        -> [ListedRefusedCount]
    /// Rules by scope: 0 for the app, else the event id.
    func riskRules(appID: AppID) async throws(StoreError) -> [Int: RiskRules]
    func setRiskRules(appID: AppID, scope: Int, rules: RiskRules, at now: Date, audit: AuditEntry) async throws(StoreError)
    /// The fraud team's rules, by name.
    func policyRules(appID: AppID) async throws(StoreError) -> [PolicyRule]
    /// Creates or replaces the rule of its name; `.conflict` past `PolicyRule.maximumPerApp` rules.
    func putPolicyRule(_ rule: PolicyRule, appID: AppID, at now: Date, audit: AuditEntry) async throws(StoreError)
    /// `.notFound` if the app has no rule of that name.
    func removePolicyRule(appID: AppID, name: String, audit: AuditEntry) async throws(StoreError)
    /// Newest first, those numbered below `before` (all when nil).
    func policyVersions(appID: AppID, before: Int?, limit: Int) async throws(StoreError) -> [PolicyVersion]
    func policyVersion(appID: AppID, number: Int) async throws(StoreError) -> PolicyVersion?
    /// Writes version `number` back as the app's policy, published as the next version (returned);
    /// `.notFound` for no such version.
    func restorePolicyVersion(appID: AppID, number: Int, at now: Date, audit: AuditEntry) async throws(StoreError) -> PolicyVersion
    /// `.conflict` for an entry that is already on the list.
    func addListEntry(_ entry: RiskListEntry, audit: AuditEntry) async throws(StoreError)
    func listEntries(appID: AppID) async throws(StoreError) -> [RiskListEntry]
    /// `.notFound` if the app has no such entry.
    func removeListEntry(appID: AppID, id: UUID, audit: AuditEntry) async throws(StoreError)
    func updateSettings(of app: App, to updated: App, audit: AuditEntry) async throws(StoreError)
    /// The app's shadow policy, one at most: set (or replaced), read, stopped (`.notFound` without one).
    func setShadow(_ shadow: PolicyShadow, appID: AppID, audit: AuditEntry) async throws(StoreError)
    func shadow(appID: AppID) async throws(StoreError) -> PolicyShadow?
    func removeShadow(appID: AppID, audit: AuditEntry) async throws(StoreError)
    /// Replays (`SQLDeviceRiskStore+Replays.swift` says how each is bounded).
    func countDecisions(appID: AppID, from: Date, to: Date, limit: Int) async throws(StoreError) -> Int
    func startReplay(_ run: ReplayRun, audit: AuditEntry) async throws(StoreError)
    func replay(appID: AppID, id: UUID) async throws(StoreError) -> ReplayRun?
    func replays(appID: AppID) async throws(StoreError) -> [ReplayRun]
    func storedDecisions(
        appID: AppID,
        from: Date,
        to: Date,
        after position: StoredPosition?,
        limit: Int
    ) async throws(StoreError) -> (decisions: [StoredDecision], next: StoredPosition?)
    func recordReplayProgress(
        appID: AppID,
        id: UUID,
        processed: Int,
        report: ReplayReport,
        changes: [ChangedDecision],
        at now: Date
    ) async throws(StoreError) -> Bool
    func finishReplay(appID: AppID, id: UUID, status: ReplayRun.Status, report: ReplayReport?, error: String?, at now: Date) async throws(StoreError)
    func cancelReplay(appID: AppID, id: UUID, audit: AuditEntry) async throws(StoreError)
    /// In time order, from the `offset`th (a replay keeps at most `ReplayRun.keptChanges`).
    func replayChanges(appID: AppID, replayID: UUID, offset: Int, limit: Int) async throws(StoreError) -> [ChangedDecision]
    /// How many times a risk query recorded a ztoken's consumption: a forged token must not move it.
    var ztokenLookups: Int { get }
    /// Decisions of refused tokens written behind their answers so far, lost (queue full or the
    /// database refused their batch), and queued now: a crash loses at most those queued.
    var decisionsBehind: (written: Int, lost: Int, pending: Int) { get }
    /// Returns once every decision queued behind an answer before the call is written (or lost):
    /// graceful shutdown awaits it.
    func catchUpWritesBehind() async
}

/// A decision in the operators' listing, with the appKey they know the app by.
public struct ListedDecision: Sendable, Equatable {
    public let record: RiskDecisionRecord
    public let appKey: AppKey
}

/// A stored decision with what it was judged from (so the caller need not read the device again).
public struct RecordedRiskDecision: Sendable {
    public let record: RiskDecisionRecord
    public let facts: RiskFacts
}
