import Foundation

/// What a replay found over its window: each stored decision's outcome then against its outcome under
/// the proposed policy, each rule's hits, and, against the labels, precision and recall. "Flagged"
/// means not passed (review or reject): what the fraud team would look at or block.
public struct ReplayReport: Equatable, Sendable, Codable {
    public struct RuleTally: Equatable, Sendable, Codable {
        /// Decisions the rule matched (enforced or monitored alike: a replay asks what it would catch).
        public var hits = 0
        public var errors = 0
        public var fraudHits = 0
        public var legitimateHits = 0

        public init() {}
    }

    /// Decisions re-judged.
    public var replayed = 0
    /// Decisions stored without facts (before they were stored, or unreadable): counted, not judged.
    public var withoutFacts = 0
    /// `matrix[before][after]`, each index `pass`, `review`, `reject` in that order.
    public var matrix = [[Int]](repeating: [0, 0, 0], count: 3)
    public var changed = 0
    /// By rule name, for every rule of the proposed policy.
    public var rules: [String: RuleTally] = [:]
    public var fraud = 0
    public var legitimate = 0
    public var fraudFlaggedBefore = 0
    public var fraudFlaggedAfter = 0
    public var legitimateFlaggedBefore = 0
    public var legitimateFlaggedAfter = 0

    public init(rules: [String] = []) {
        for rule in rules { self.rules[rule] = RuleTally() }
    }

    static func index(_ decision: RiskDecision) -> Int { decision.severity }

    public mutating func add(before: RiskDecision, after: RiskVerdict, label: DecisionLabel.Verdict?) {
        replayed += 1
        matrix[Self.index(before)][Self.index(after.decision)] += 1
        if before != after.decision { changed += 1 }
        for outcome in after.rules {
            var tally = rules[outcome.rule] ?? RuleTally()
            if outcome.error != nil {
                tally.errors += 1
            } else {
                tally.hits += 1
                if label == .fraud { tally.fraudHits += 1 }
                if label == .legitimate { tally.legitimateHits += 1 }
            }
            rules[outcome.rule] = tally
        }
        switch label {
        case .fraud:
            fraud += 1
            if before != .pass { fraudFlaggedBefore += 1 }
            if after.decision != .pass { fraudFlaggedAfter += 1 }
        case .legitimate:
            legitimate += 1
            if before != .pass { legitimateFlaggedBefore += 1 }
            if after.decision != .pass { legitimateFlaggedAfter += 1 }
        case nil: break
        }
    }

    /// Of the labelled decisions flagged, the share that was fraud; nil when none was flagged.
    public static func precision(fraud: Int, legitimate: Int) -> Double? {
        fraud + legitimate == 0 ? nil : Double(fraud) / Double(fraud + legitimate)
    }

    /// Of the labelled fraud, the share flagged; nil when nothing is labelled fraud.
    public func recall(flaggedFraud: Int) -> Double? {
        fraud == 0 ? nil : Double(flaggedFraud) / Double(fraud)
    }

    public var precisionBefore: Double? { Self.precision(fraud: fraudFlaggedBefore, legitimate: legitimateFlaggedBefore) }
    public var precisionAfter: Double? { Self.precision(fraud: fraudFlaggedAfter, legitimate: legitimateFlaggedAfter) }
    public var recallBefore: Double? { recall(flaggedFraud: fraudFlaggedBefore) }
    public var recallAfter: Double? { recall(flaggedFraud: fraudFlaggedAfter) }
}

/// A stored decision as a replay reads it: what it was, and what it was judged on.
public struct StoredDecision: Sendable {
    public let id: UUID
    public let decidedAt: Date
    public let decision: RiskDecision
    public let score: Int
    public let label: DecisionLabel.Verdict?
    /// Nil when the decision has no readable facts.
    public let judged: JudgedQuery?

    public init(id: UUID, decidedAt: Date, decision: RiskDecision, score: Int, label: DecisionLabel.Verdict?, judged: JudgedQuery?) {
        self.id = id
        self.decidedAt = decidedAt
        self.decision = decision
        self.score = score
        self.label = label
        self.judged = judged
    }
}

/// A decision whose outcome the proposed policy changes.
public struct ChangedDecision: Equatable, Sendable {
    public let id: UUID
    public let decidedAt: Date
    public let before: RiskDecision
    public let after: RiskDecision
    public let scoreBefore: Int
    public let scoreAfter: Int

    public init(id: UUID, decidedAt: Date, before: RiskDecision, after: RiskDecision, scoreBefore: Int, scoreAfter: Int) {
        self.id = id
        self.decidedAt = decidedAt
        self.before = before
        self.after = after
        self.scoreBefore = scoreBefore
        self.scoreAfter = scoreAfter
    }
}

extension RiskEngine {
    /// Re-judges one page of stored decisions with `policy`, adding to `report`; returns the decisions
    /// whose outcome changed.
    public static func replay(_ page: [StoredDecision], policy: RiskPolicy, into report: inout ReplayReport) -> [ChangedDecision] {
        var changed: [ChangedDecision] = []
        for stored in page {
            guard let judged = stored.judged else {
                report.withoutFacts += 1
                continue
            }
            let verdict = verdict(judged, policy: policy, thresholds: policy.effectiveRules(for: judged.eventID))
            report.add(before: stored.decision, after: verdict, label: stored.label)
            if verdict.decision != stored.decision {
                changed.append(
                    ChangedDecision(
                        id: stored.id,
                        decidedAt: stored.decidedAt,
                        before: stored.decision,
                        after: verdict.decision,
                        scoreBefore: stored.score,
                        scoreAfter: verdict.score
                    )
                )
            }
        }
        return changed
    }
}
