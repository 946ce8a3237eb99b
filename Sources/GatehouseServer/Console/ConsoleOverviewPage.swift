import GatehouseCore
import GatehouseStore

/// The overview's values, in three parts each built by its own function; the template opens each part
/// as a section (`{{#decisions}}`), inside which a name is the part's, else the page's.
struct OverviewPage: ConsolePage {
    static let template = "overview"

    struct Window {
        let value: String
        let current: Bool
    }
    struct Outcome {
        let outcome: String
        let count: Int
    }
    struct DecisionChart {
        let chartWidth = ConsoleOverviewController.chartWidth
        let chartHeight = ConsoleOverviewController.chartHeight
        let bars: [ConsoleChart.Bar]
        let noDecisions: Bool
        let peak: String
        let outcomes: [Outcome]

        init(bars: [ConsoleChart.Bar], peak: String, outcomes: [Outcome]) {
            self.bars = bars
            self.noDecisions = bars.isEmpty
            self.peak = peak
            self.outcomes = outcomes
        }
    }
    struct Rank {
        let label: String
        let count: Int
        let width: Double
        var link: String? = nil
    }
    struct Rejected {
        let title: String
        let items: [Rank]
    }
    struct Rankings {
        let tokenStates: [Rank]
        let tags: [Rank]
        let rejected: [Rejected]
        let sample = SQLConsoleStore.rejectedSample
    }
    struct AttestationFlow {
        let kind: String
        let issued: Int
        let solved: Int
    }
    struct CaptchaFlow {
        let issued: Int
        let passed: Int
        let failed: Int
        let passRate: String
    }
    struct STSFlow {
        let provider: String
        let count: Int
    }
    struct Flows {
        let attestation: [AttestationFlow]
        let captcha: CaptchaFlow
        let sts: [STSFlow]
    }

    /// Labelled decisions of the window by label and outcome: what the policy got wrong is the two
    /// links (labelled fraud it passed, legitimate traffic it rejected).
    struct Labels {
        let fraudPassed: Int
        let legitimateRejected: Int
        let fraud: Int
        let legitimate: Int
        let fraudPassedLink: String
        let legitimateRejectedLink: String
    }

    /// What monitoring says: each attester's gate verdicts (the share valid, to decide when to
    /// enforce), and each policy rule's matches by mode and its failures.
    struct Monitor {
        struct Attester {
            let attester: String
            let counts: [Int]
            let validShare: String
        }
        struct Rule {
            let rule: String
            let enforced: Int
            let monitored: Int
            let failed: Int
        }
        /// Live outcome by shadow outcome, when a shadow policy ran in the window.
        struct ShadowRow {
            let live: String
            let counts: [Int]
        }
        let verdicts = AttestVerdict.allCases.map(\.rawValue)
        let outcomes = RiskDecision.allCases.map(\.rawValue)
        let attesters: [Attester]
        let rules: [Rule]
        let shadow: [ShadowRow]
        let hasShadow: Bool
    }

    let title: String
    let appKey: String
    let windows: [Window]
    let from: String
    let to: String
    let decisions: DecisionChart
    let rankings: Rankings
    let flows: Flows
    let labels: Labels
    let monitor: Monitor
}
