import Foundation
import GatehouseCore
import GatehouseOperations
import GatehouseStore
import Hummingbird

/// `/console/apps/:appKey/overview`: an app's activity over a chosen window, as charts: decisions per
/// minute by outcome, token states, tags, the addresses, accounts and devices most rejected,
/// attestation challenges issued and solved by kind, the captcha's pass rate, STS credentials vended.
struct ConsoleOverviewController {
    typealias Context = ConsoleContext
    let pages: ConsolePages
    let apps: AppOperations
    let activity: any ActivityStore
    let clock: any GatehouseClock

    static let chartWidth = 960.0
    static let chartHeight = 220.0
    static let rankWidth = 150.0

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/console/apps/:appKey/overview", for: .console, use: overview)
    }

    @Sendable func overview(_ request: Request, context: Context) async throws -> Response {
        let window = try OverviewWindow(validating: request.uri.queryParameters.get("window"))
        let app = try await apps.app(try Query.appKey(context))
        // This instance's latest counts first, so that what just happened here shows; other
        // instances' arrive within their flush interval.
        try? await activity.flushActivity()
        let now = clock.now()
        let start = window.start(at: now)
        let summary = try await activity.activitySummary(appID: app.id, since: start, bucketSeconds: window.bucketSeconds)
        let shown = OverviewPage(
            title: "Overview of \(app.name)",
            appKey: app.appKey.rawValue,
            windows: OverviewWindow.allCases.map { .init(value: $0.rawValue, current: $0 == window) },
            from: ConsoleText.time(start),
            to: ConsoleText.time(now),
            decisions: Self.decisionChart(summary, window: window, start: start),
            rankings: Self.rankings(summary, appKey: app.appKey.rawValue),
            flows: Self.flows(summary),
            labels: Self.labels(summary, appKey: app.appKey.rawValue, since: start),
            monitor: Self.monitor(summary)
        )
        return pages.page(shown, caller: context.console)
    }

    static func decisionChart(_ summary: ActivitySummary, window: OverviewWindow, start: Date) -> OverviewPage.DecisionChart {
        var buckets = [[String: Int]](repeating: [:], count: window.bucketCount)
        for entry in summary.decisionsByBucket where buckets.indices.contains(entry.bucket) {
            buckets[entry.bucket][entry.outcome, default: 0] += entry.count
        }
        let chart = ConsoleChart.stacked(
            buckets,
            series: RiskDecision.allCases.map(\.rawValue),
            bucketMinutes: window.bucketSeconds / 60,
            width: chartWidth,
            height: chartHeight
        ) { index in ConsoleText.time(start.addingTimeInterval(Double(index) * window.bucketSeconds)) }
        let outcomes = summary.totals[.decision] ?? [:]
        return OverviewPage.DecisionChart(
            bars: chart.bars,
            peak: String(format: "%.1f", chart.peakPerMinute),
            outcomes: RiskDecision.allCases.map { .init(outcome: $0.rawValue, count: outcomes[$0.rawValue] ?? 0) }
        )
    }

    static func rankings(_ summary: ActivitySummary, appKey: String) -> OverviewPage.Rankings {
        func ranked(_ counts: [String: Int]) -> [OverviewPage.Rank] {
            let top = counts.sorted { $0.value != $1.value ? $0.value > $1.value : $0.key < $1.key }.prefix(10).map {
                (label: $0.key, count: $0.value)
            }
            return ConsoleChart.ranked(Array(top), width: rankWidth).map { OverviewPage.Rank(label: $0.label, count: $0.count, width: $0.width) }
        }
        func rejected(_ column: String, filter: String, title: String) -> OverviewPage.Rejected {
            let items = ConsoleChart.ranked(summary.topRejected[column] ?? [], width: rankWidth)
            return OverviewPage.Rejected(
                title: title,
                items: items.map { item in
                    var query = URLComponents()
                    query.queryItems = [
                        .init(name: "appKey", value: appKey), .init(name: "decision", value: "reject"), .init(name: filter, value: item.label),
                    ]
                    return OverviewPage.Rank(
                        label: item.label,
                        count: item.count,
                        width: item.width,
                        link: "/console/decisions" + (query.string ?? "")
                    )
                }
            )
        }
        return OverviewPage.Rankings(
            tokenStates: ranked(summary.totals[.tokenState] ?? [:]),
            tags: ranked(summary.totals[.tag] ?? [:]),
            rejected: [
                rejected("client_address", filter: "address", title: "Addresses"), rejected("account_id", filter: "accountId", title: "Accounts"),
                rejected("device_id", filter: "deviceId", title: "Devices"),
            ]
        )
    }

    static func flows(_ summary: ActivitySummary) -> OverviewPage.Flows {
        let issued = summary.totals[.attestIssued] ?? [:]
        let solved = summary.totals[.attestSolved] ?? [:]
        let kinds = AttesterKind.allCases.map(\.rawValue).filter { issued[$0] != nil || solved[$0] != nil }
        let captchaIssued = summary.totals[.captchaIssued]?[""] ?? 0
        let passed = summary.totals[.captchaPassed]?[""] ?? 0
        let failed = summary.totals[.captchaFailed]?[""] ?? 0
        return OverviewPage.Flows(
            attestation: kinds.map { .init(kind: $0, issued: issued[$0] ?? 0, solved: solved[$0] ?? 0) },
            captcha: .init(
                issued: captchaIssued,
                passed: passed,
                failed: failed,
                passRate: passed + failed == 0 ? "none answered" : String(format: "%.0f%%", Double(passed) / Double(passed + failed) * 100)
            ),
            sts: (summary.totals[.stsVended] ?? [:]).sorted { $0.key < $1.key }.map { .init(provider: $0.key, count: $0.value) }
        )
    }

    static func labels(_ summary: ActivitySummary, appKey: String, since start: Date) -> OverviewPage.Labels {
        func count(_ label: String, _ decision: String? = nil) -> Int {
            summary.labelled.filter { $0.label == label && (decision == nil || $0.decision == decision) }.reduce(0) { $0 + $1.count }
        }
        func link(_ label: String, _ decision: String) -> String {
            var query = URLComponents()
            query.queryItems = [
                .init(name: "appKey", value: appKey), .init(name: "label", value: label), .init(name: "decision", value: decision),
                .init(name: "from", value: ConsoleText.time(start)),
            ]
            return "/console/decisions?" + (query.percentEncodedQuery ?? "")
        }
        return OverviewPage.Labels(
            fraudPassed: count("fraud", "pass"),
            legitimateRejected: count("legitimate", "reject"),
            fraud: count("fraud"),
            legitimate: count("legitimate"),
            fraudPassedLink: link("fraud", "pass"),
            legitimateRejectedLink: link("legitimate", "reject")
        )
    }

    static func monitor(_ summary: ActivitySummary) -> OverviewPage.Monitor {
        var verdicts: [String: [String: Int]] = [:]
        for (label, count) in summary.totals[.attestVerdict] ?? [:] {
            let parts = label.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            verdicts[parts[0], default: [:]][parts[1], default: 0] += count
        }
        let attesters = verdicts.keys.sorted().map { attester in
            let counts = AttestVerdict.allCases.map { verdicts[attester]?[$0.rawValue] ?? 0 }
            let total = counts.reduce(0, +)
            let share = total == 0 ? "none" : String(format: "%.1f%%", Double(counts[0]) / Double(total) * 100)
            return OverviewPage.Monitor.Attester(attester: attester, counts: counts, validShare: share)
        }
        var rules: [String: (enforced: Int, monitored: Int, failed: Int)] = [:]
        for (label, count) in summary.totals[.rule] ?? [:] {
            let parts = label.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            switch parts[0] {
            case "enforce": rules[parts[1], default: (0, 0, 0)].enforced += count
            case "monitor": rules[parts[1], default: (0, 0, 0)].monitored += count
            default: rules[parts[1], default: (0, 0, 0)].failed += count
            }
        }
        let shadow = summary.totals[.shadow] ?? [:]
        return OverviewPage.Monitor(
            attesters: attesters,
            rules: rules.keys.sorted().map {
                .init(rule: $0, enforced: rules[$0]!.enforced, monitored: rules[$0]!.monitored, failed: rules[$0]!.failed)
            },
            shadow: RiskDecision.allCases.map { live in
                .init(live: live.rawValue, counts: RiskDecision.allCases.map { shadow["\(live.rawValue) \($0.rawValue)"] ?? 0 })
            },
            hasShadow: !shadow.isEmpty
        )
    }
}
