import Foundation
import GatehouseCore
import GatehouseStore

/// Replays: re-judge an app's stored decisions over a window with a proposed policy (a version, or a
/// version with other thresholds and weights or other policy rules), and report what would change.
/// Read-only on the decisions; one at a time an app; bounded in decisions (`ReplayRun.maximumDecisions`)
/// and in memory (one page and the report).
public struct ReplayOperations: Sendable {
    let store: any DeviceRiskStore
    let apps: AppOperations
    let clock: any GatehouseClock

    public init(store: any DeviceRiskStore, apps: AppOperations, clock: any GatehouseClock) {
        self.store = store
        self.apps = apps
        self.clock = clock
    }

    /// What to replay: the window, the version to start from (nil: the newest), and what to put in
    /// place of its thresholds and weights or of its policy rules.
    public struct Request: Sendable {
        public var from: Date
        public var to: Date
        public var version: Int?
        /// By scope (0 for the app, else an event id), each checked as `RiskRules.validated` does.
        public var rules: [Int: RiskRules]?
        public var policyRules: [PolicyRule]?

        public init(from: Date, to: Date, version: Int? = nil, rules: [Int: RiskRules]? = nil, policyRules: [PolicyRule]? = nil) {
            self.from = from
            self.to = to
            self.version = version
            self.rules = rules
            self.policyRules = policyRules
        }
    }

    /// Starts the replay and runs it in this instance's background (the server's way); returns it at
    /// once, running.
    public func startInBackground(_ appKey: AppKey, _ request: Request, origin: ChangeOrigin) async throws -> ReplayRun {
        let run = try await start(appKey, request, origin: origin)
        Task(priority: .background) { await self.run(run) }
        return run
    }

    /// Stores the replay as running and returns it; `run(_:)` does the work.
    public func start(_ appKey: AppKey, _ request: Request, origin: ChangeOrigin) async throws -> ReplayRun {
        let app = try await apps.app(appKey)
        let window = try ReplayRun.window(from: request.from, to: request.to)
        let document = try await PolicyVersionOperations(store: store, apps: apps, clock: clock).proposal(
            app,
            version: request.version,
            rules: request.rules,
            policyRules: request.policyRules
        )
        // Checked (once the request is) before the window is counted (up to 2,000,001 rows), not after:
        // a caller who sends starts in a loop while one runs costs a read of at most 20 rows each.
        if try await store.replays(appID: app.id).contains(where: { $0.status == .running && !$0.isAbandoned(at: clock.now()) }) {
            throw Self.running(appKey)
        }
        let total = try await store.countDecisions(appID: app.id, from: window.from, to: window.to, limit: ReplayRun.maximumDecisions + 1)
        guard total <= ReplayRun.maximumDecisions else {
            throw DomainError(.invalidReplay, "The window holds more than \(ReplayRun.maximumDecisions) decisions; narrow it.", field: "from")
        }
        let now = clock.now()
        let run = ReplayRun(
            id: UUID.random(),
            appID: app.id,
            status: .running,
            requestedBy: origin.actor.description,
            proposedVersion: document.version,
            document: document.document,
            from: window.from,
            to: window.to,
            total: total,
            processed: 0,
            report: nil,
            error: nil,
            startedAt: now,
            updatedAt: now,
            finishedAt: nil
        )
        let audit = origin.entry(
            at: now,
            action: "risk.replay.start",
            targetType: "replay",
            targetID: run.id.text,
            appID: app.id,
            before: nil,
            after: ["version": document.version.map { .int($0) } ?? .string("proposed"), "decisions": .int(total)]
        )
        do {
            try await store.startReplay(run, audit: audit)
        } catch {
            if case .conflict = error { throw Self.running(appKey) }
            throw error
        }
        return run
    }

    /// Does the replay's work, page by page, until the window is done, it is cancelled or it fails;
    /// stores the outcome. Runs on the instance that started it.
    public func run(_ run: ReplayRun) async {
        var report = ReplayReport(rules: run.document.policyRules.map(\.name))
        do {
            let events = Set(try await apps.store.events(of: run.appID).map(\.eventID.rawValue))
            // Attesters are not part of a version: whether hardware was required is in each decision's facts.
            let policy = run.document.policy(events: events, attesters: [], version: run.proposedVersion ?? 0)
            let (id, app, from, to) = (run.id, run.appID, run.from, run.to)
            var read = try await store.storedDecisions(appID: app, from: from, to: to, after: nil, limit: ReplayRun.pageSize)
            var processed = 0
            while processed < ReplayRun.maximumDecisions, !read.decisions.isEmpty {
                let (page, position) = (read.decisions, read.next)
                // The next page is read while this one is judged: the database's work and Core's overlap.
                async let following = store.storedDecisions(appID: app, from: from, to: to, after: position, limit: ReplayRun.pageSize)
                let changed = RiskEngine.replay(page, policy: policy, into: &report)
                processed += page.count
                let going = try await store.recordReplayProgress(
                    appID: app,
                    id: id,
                    processed: processed,
                    report: report,
                    changes: changed,
                    at: clock.now()
                )
                guard going else {
                    try await store.finishReplay(appID: app, id: id, status: .cancelled, report: report, error: nil, at: clock.now())
                    return
                }
                read = page.count < ReplayRun.pageSize ? ([], nil) : try await following
            }
            try await store.finishReplay(appID: run.appID, id: run.id, status: .completed, report: report, error: nil, at: clock.now())
        } catch {
            // The store's errors name what failed, never a value.
            try? await store.finishReplay(
                appID: run.appID,
                id: run.id,
                status: .failed,
                report: report,
                error: String(describing: error),
                at: clock.now()
            )
        }
    }

    public func replay(_ appKey: AppKey, id: String) async throws -> ReplayRun {
        let app = try await apps.app(appKey)
        guard let uuid = UUID(uuidString: id), var run = try await store.replay(appID: app.id, id: uuid) else { throw Self.notFound(appKey, id) }
        if run.isAbandoned(at: clock.now()) {
            run.status = .failed
            run.error = "abandoned: its instance stopped"
        }
        return run
    }

    public func replays(_ appKey: AppKey) async throws -> [ReplayRun] {
        try await store.replays(appID: try await apps.app(appKey).id)
    }

    /// The replay's changed decisions in time order, a page from `cursor` (the previous page's
    /// `next`: how many came before, up to the pattern's five digits; past the last one the page is empty).
    public func changes(_ appKey: AppKey, id: String, cursor: String?, limit: Int?) async throws -> (changes: [ChangedDecision], next: String?) {
        let run = try await replay(appKey, id: id)
        let size = try PageSize(validating: limit)
        var offset = 0
        if let cursor {
            guard let value = Int(cursor), (0...99_999).contains(value) else {
                throw DomainError(.invalidParameter, "cursor is the nextCursor of a previous page.", field: "cursor")
            }
            offset = value
        }
        let page = try await store.replayChanges(appID: run.appID, replayID: run.id, offset: offset, limit: size.value + 1)
        let shown = Array(page.prefix(size.value))
        return (shown, page.count > size.value ? String(offset + shown.count) : nil)
    }

    public func cancel(_ appKey: AppKey, id: String, origin: ChangeOrigin) async throws -> ReplayRun {
        let run = try await replay(appKey, id: id)
        let audit = origin.entry(
            at: clock.now(),
            action: "risk.replay.cancel",
            targetType: "replay",
            targetID: run.id.text,
            appID: run.appID,
            before: ["status": .string(run.status.rawValue)],
            after: ["status": .string("cancelling")]
        )
        do {
            try await store.cancelReplay(appID: run.appID, id: run.id, audit: audit)
        } catch {
            switch error {
            case .notFound: throw Self.notFound(appKey, id)
            case .conflict: throw DomainError(.replayRunning, "The replay is \(run.status.rawValue), not running.", kind: .conflict)
            default: throw error
            }
        }
        return try await replay(appKey, id: id)
    }

    static func running(_ appKey: AppKey) -> DomainError {
        DomainError(.replayRunning, "\(appKey) has a replay running; wait for it or cancel it.")
    }

    static func notFound(_ appKey: AppKey, _ id: String) -> DomainError {
        DomainError(.replayNotFound, "\(appKey) has no replay \(id.prefix(64)).")
    }
}
