import Foundation

/// One replay of an app's stored decisions with a proposed policy over a time window: read-only on
/// the decisions, one at a time an app, its progress stored after each page so that any instance
/// reports it and a cancel from any instance stops it.
public struct ReplayRun: Equatable, Sendable {
    public enum Status: String, Sendable, CaseIterable {
        case running, completed, cancelled, failed
    }

    /// A replay reads at most this many decisions: a window that holds more is refused before any
    /// work (narrow it), so that no request can start hours of work.
    public static let maximumDecisions = 2_000_000
    /// Decisions read and judged per step; the memory a replay holds is one page and the report.
    public static let pageSize = 2_000
    /// A running replay whose progress has not moved for this long lost its instance (a crash or a
    /// restart): it no longer counts as running, and is marked failed when the next one starts.
    public static let abandonedAfter: TimeInterval = 60
    /// Changed decisions kept for paging; the report counts them all.
    public static let keptChanges = 10_000
    /// Finished replays kept per app, newest first.
    public static let keptPerApp = 20

    public let id: UUID
    public let appID: AppID
    public var status: Status
    public let requestedBy: String
    /// The version replayed; nil for a proposed policy.
    public let proposedVersion: Int?
    public let document: PolicyDocument
    public let from: Date
    public let to: Date
    /// Decisions in the window when the replay started.
    public let total: Int
    public var processed: Int
    public var report: ReplayReport?
    public var error: String?
    public let startedAt: Date
    public var updatedAt: Date
    public var finishedAt: Date?

    public init(
        id: UUID,
        appID: AppID,
        status: Status,
        requestedBy: String,
        proposedVersion: Int?,
        document: PolicyDocument,
        from: Date,
        to: Date,
        total: Int,
        processed: Int,
        report: ReplayReport?,
        error: String?,
        startedAt: Date,
        updatedAt: Date,
        finishedAt: Date?
    ) {
        self.id = id
        self.appID = appID
        self.status = status
        self.requestedBy = requestedBy
        self.proposedVersion = proposedVersion
        self.document = document
        self.from = from
        self.to = to
        self.total = total
        self.processed = processed
        self.report = report
        self.error = error
        self.startedAt = startedAt
        self.updatedAt = updatedAt
        self.finishedAt = finishedAt
    }

    /// Checks a requested window: `from` before `to`, both within the years a date can be stored in.
    public static func window(from: Date, to: Date) throws(DomainError) -> (from: Date, to: Date) {
        let earliest = Date(timeIntervalSince1970: 0)
        let latest = Date(timeIntervalSince1970: 253_402_300_799)
        guard from < to else { throw DomainError(.invalidReplay, "from is before to.", field: "from") }
        guard from >= earliest, to <= latest else { throw DomainError(.invalidReplay, "from and to are between 1970 and 9999.", field: "to") }
        return (from, to)
    }

    /// Whether a running replay still has an instance working on it.
    public func isAbandoned(at now: Date) -> Bool {
        status == .running && now.timeIntervalSince(updatedAt) > Self.abandonedAfter
    }

    /// From 0 to 1.
    public var progress: Double {
        total == 0 ? (status == .running ? 0 : 1) : min(1, Double(processed) / Double(total))
    }
}
