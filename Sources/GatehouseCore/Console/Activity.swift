// Console: the operators' web pages at /console, signed in with an admin token.
// Serves the operators of every seed's server half, as the admin API does; no SDK calls it.

import Foundation

/// What the console's overview counts per app and minute, beside the decisions themselves: each a
/// metric with a label (the outcome, the state, the tag, the attester kind, the provider).
public enum ActivityMetric: String, Sendable, CaseIterable {
    /// A risk decision, labelled with its outcome (`pass`, `review`, `reject`).
    case decision
    /// A risk decision, labelled with the state its ztoken was found in.
    case tokenState = "token_state"
    /// A tag a decision carried, labelled with the tag.
    case tag
    /// An attestation challenge issued, labelled with the attester's kind.
    case attestIssued = "attest_issued"
    /// An attestation token issued (the challenge solved), labelled with the attester's kind.
    case attestSolved = "attest_solved"
    /// A captcha puzzle issued; answered right (`passed`) or wrong (`failed`).
    case captchaIssued = "captcha_issued"
    case captchaPassed = "captcha_passed"
    case captchaFailed = "captcha_failed"
    /// Temporary credentials handed to a device, labelled with the provider.
    case stsVended = "sts_vended"
    /// A policy rule that matched a decision, labelled `<mode> <rule>`, or failed on it, `error <rule>`.
    case rule
    /// The gate's verdict on a request an attester gates, labelled `<attestId> <verdict>`.
    case attestVerdict = "attest_verdict"
    /// A decision a shadow policy also judged, labelled `<live outcome> <shadow outcome>`.
    case shadow
}

/// One counter: an app, a UTC minute, a metric and its label.
public struct ActivityKey: Hashable, Sendable {
    public let appID: AppID
    public let minute: Date
    public let metric: ActivityMetric
    public let label: String

    public init(appID: AppID, at time: Date, metric: ActivityMetric, label: String) {
        self.appID = appID
        self.minute = Date(timeIntervalSince1970: (time.timeIntervalSince1970 / 60).rounded(.down) * 60)
        self.metric = metric
        self.label = label
    }

    /// The counters a decision moves: its outcome, its token's state, each of its tags.
    public static func of(_ record: RiskDecisionRecord) -> [ActivityKey] {
        [
            ActivityKey(appID: record.appID, at: record.decidedAt, metric: .decision, label: record.verdict.decision.rawValue),
            ActivityKey(appID: record.appID, at: record.decidedAt, metric: .tokenState, label: record.tokenState.rawValue),
        ] + record.verdict.tags.map { ActivityKey(appID: record.appID, at: record.decidedAt, metric: .tag, label: $0.tag) }
            + record.verdict.rules.map { outcome in
                let label = outcome.error == nil ? "\(outcome.mode.rawValue) \(outcome.rule)" : "error \(outcome.rule)"
                return ActivityKey(appID: record.appID, at: record.decidedAt, metric: .rule, label: label)
            }
            + (record.shadow.map { shadow in
                [
                    ActivityKey(
                        appID: record.appID,
                        at: record.decidedAt,
                        metric: .shadow,
                        label: "\(record.verdict.decision.rawValue) \(shadow.decision.rawValue)"
                    )
                ]
            } ?? [])
    }
}

/// The overview's window: how far back it looks, and the width of each bar of its time chart, so
/// that every window draws 60 to 96 bars.
public enum OverviewWindow: String, Sendable, CaseIterable {
    case hour = "1h"
    case sixHours = "6h"
    case day = "24h"
    case week = "7d"

    public init(validating text: String?) throws(DomainError) {
        guard let text else {
            self = .day
            return
        }
        guard let window = OverviewWindow(rawValue: text) else {
            throw DomainError(.invalidParameter, "window is 1h, 6h, 24h or 7d.", field: "window")
        }
        self = window
    }

    public var seconds: TimeInterval {
        switch self {
        case .hour: 3600
        case .sixHours: 6 * 3600
        case .day: 24 * 3600
        case .week: 7 * 24 * 3600
        }
    }

    public var bucketSeconds: TimeInterval {
        switch self {
        case .hour: 60
        case .sixHours: 5 * 60
        case .day: 15 * 60
        case .week: 2 * 3600
        }
    }

    /// The first bucket's start: whole buckets, the last one holding `now`.
    public func start(at now: Date) -> Date {
        let end = (now.timeIntervalSince1970 / bucketSeconds).rounded(.down) * bucketSeconds + bucketSeconds
        return Date(timeIntervalSince1970: end - seconds)
    }

    public var bucketCount: Int { Int(seconds / bucketSeconds) }
}
