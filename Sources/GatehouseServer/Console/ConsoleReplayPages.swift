import Foundation
import GatehouseCore

/// The replays page: the form and the app's replays.
struct ReplaysPage: ConsolePage {
    static let template = "replays"

    struct Row {
        let id: String
        let status: String
        let progress: Int
        let startedAt: String
        let proposal: String
        let changed: String

        init(_ run: ReplayRun) {
            id = run.id.text
            status = run.status.rawValue
            progress = Int((run.progress * 100).rounded(.down))
            startedAt = ConsoleText.time(run.startedAt)
            proposal = run.proposedVersion.map { "version \($0)" } ?? "proposed"
            changed = run.report.map { String($0.changed) } ?? ""
        }
    }

    let title: String
    let appKey: String
    let replays: [Row]
    let versions: [Int]
    let from: String
    let to: String
}

/// One replay: its progress (the page reloads itself while it runs), the before/after matrix as
/// bars, each rule's figures, and the first changed decisions.
struct ReplayPage: ConsolePage {
    static let template = "replay"
    static let chartHeight = 160.0

    struct Bar {
        let x: Double
        let y: Double
        let height: Double
        let series: String
        let title: String
    }
    struct Cell {
        let count: Int
        let changed: Bool
    }
    struct MatrixRow {
        let before: String
        let cells: [Cell]
    }
    struct Rule {
        let rule: String
        let hits: Int
        let errors: Int
        let precision: String
        let recall: String
    }
    struct Change {
        let id: String
        let decidedAt: String
        let before: String
        let after: String
        let scores: String
    }

    let title: String
    let appKey: String
    let replayId: String
    let status: String
    let running: Bool
    /// Seconds before the browser asks again (`<meta http-equiv="refresh">`), while it runs.
    let refresh: Int?
    let progress: Int
    let processed: Int
    let total: Int
    let error: String?
    let hasReport: Bool
    let replayed: Int
    let changed: Int
    let withoutFacts: Int
    let outcomes = RiskDecision.allCases.map(\.rawValue)
    let matrix: [MatrixRow]
    let bars: [Bar]
    let rules: [Rule]
    let precision: String
    let recall: String
    let changes: [Change]

    init(_ run: ReplayRun, appKey: AppKey, changes: [ChangedDecision]) {
        title = "Replay \(run.id.text)"
        self.appKey = appKey.rawValue
        replayId = run.id.text
        status = run.status.rawValue
        running = run.status == .running
        refresh = running ? 1 : nil
        progress = Int((run.progress * 100).rounded(.down))
        (processed, total, error) = (run.processed, run.total, run.error)
        let report = run.report ?? ReplayReport()
        hasReport = run.report != nil
        (replayed, changed, withoutFacts) = (report.replayed, report.changed, report.withoutFacts)
        let outcomes = RiskDecision.allCases
        matrix = outcomes.indices.map { row in
            MatrixRow(before: outcomes[row].rawValue, cells: outcomes.indices.map { Cell(count: report.matrix[row][$0], changed: row != $0) })
        }
        bars = Self.bars(report)
        func share(_ value: Double?) -> String { value.map { String(format: "%.1f%%", $0 * 100) } ?? "no labels" }
        rules = report.rules.keys.sorted().map { name in
            let tally = report.rules[name] ?? ReplayReport.RuleTally()
            return Rule(
                rule: name,
                hits: tally.hits,
                errors: tally.errors,
                precision: share(ReplayReport.precision(fraud: tally.fraudHits, legitimate: tally.legitimateHits)),
                recall: share(report.recall(flaggedFraud: tally.fraudHits))
            )
        }
        precision = "\(share(report.precisionBefore)) → \(share(report.precisionAfter))"
        recall = "\(share(report.recallBefore)) → \(share(report.recallAfter))"
        self.changes = changes.map {
            Change(
                id: $0.id.text,
                decidedAt: ConsoleText.time($0.decidedAt),
                before: $0.before.rawValue,
                after: $0.after.rawValue,
                scores: "\($0.scoreBefore) → \($0.scoreAfter)"
            )
        }
    }

    /// Three groups (the outcome as stored), each of three bars (the outcome replayed), scaled to the
    /// largest cell.
    static func bars(_ report: ReplayReport) -> [Bar] {
        let largest = max(1, report.matrix.flatMap { $0 }.max() ?? 1)
        let outcomes = RiskDecision.allCases
        var bars: [Bar] = []
        for (row, before) in outcomes.enumerated() {
            for (column, after) in outcomes.enumerated() {
                let count = report.matrix[row][column]
                let height = Double(count) / Double(largest) * (chartHeight - 20)
                bars.append(
                    Bar(
                        x: Double(row) * 200 + Double(column) * 50 + 30,
                        y: chartHeight - height,
                        height: height,
                        series: after.rawValue,
                        title: "\(before.rawValue) → \(after.rawValue): \(count)"
                    )
                )
            }
        }
        return bars
    }
}
