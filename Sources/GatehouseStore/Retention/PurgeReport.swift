/// What one retention round deleted, by kind (`gatehouse purge` prints it; the purger logs it).
public struct PurgeReport: Sendable, Equatable {
    /// Ids of consumed ztokens past their expiry, and the pages of bridge ztokens.
    public var ztokens = 0
    /// Decisions deleted by rows (past their app's retention, where no whole day could go).
    public var decisions = 0
    /// SDK request nonces, wtoken nonces and failed-signature records past their expiry.
    public var nonces = 0
    /// Used PoW solutions and use counts of limited-use tokens past their expiry.
    public var attestations = 0
    /// Captcha challenges and pass tokens an hour past their expiry.
    public var captchas = 0
    /// Cached STS credentials past their expiry.
    public var credentials = 0
    /// Velocity pairs no window reaches any more (last seen over 25 hours ago).
    public var velocityEdges = 0
    /// Time ranges created and dropped whole (PostgreSQL); the rows counted above are the others.
    public var partitions = PartitionReport()

    public init(ztokens: Int = 0, decisions: Int = 0, nonces: Int = 0, attestations: Int = 0, captchas: Int = 0) {
        (self.ztokens, self.decisions, self.nonces, self.attestations, self.captchas) = (ztokens, decisions, nonces, attestations, captchas)
    }
}

extension PurgeReport {
    /// Two capabilities' counts, or a round's so far and the next capability's, added up.
    static func += (report: inout PurgeReport, other: PurgeReport) {
        report.ztokens += other.ztokens
        report.decisions += other.decisions
        report.nonces += other.nonces
        report.attestations += other.attestations
        report.captchas += other.captchas
        report.credentials += other.credentials
        report.velocityEdges += other.velocityEdges
        report.partitions.created += other.partitions.created
        report.partitions.dropped += other.partitions.dropped
    }
}
