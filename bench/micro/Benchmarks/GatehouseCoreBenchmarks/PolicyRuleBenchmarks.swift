import Benchmark
import Foundation
import GatehouseCore
import Synchronization

// Issue 32's bound: 200 rules add at most 10% to a risk query. Each kind of rule bench/run installs
// (bench/bench.py's policy_rule, the same texts), evaluated alone over one query's facts; the facts a
// query builds once for its rules; and the whole judgement without rules and with bench/run's 200.

/// bench/bench.py's `policy_rule(number)`: its `when`, its effect and its mode.
func benchPolicyRule(_ number: Int) -> PolicyRule {
    let when = [
        "velocity.ipDevicesLastHour > \(20 + number) && velocity.accountDevicesLastDay > 2",
        "event == 3302 && device.known && has(device.firstSeen) && now - device.firstSeen < duration(\"\(1 + number % 5)h\")",
        "cidr(\"10.\(number).0.0/16\").containsIP(client.address)",
        "account.startsWith(\"watch-\(number)-\") || account.endsWith(\"-\(number)\")",
        "\"velocity.ip_devices_per_hour\" in tags && score > \(50 + number % 40)",
        "tags.exists(t, t.startsWith(\"device.\")) && !lists.allow && score >= \(60 + number % 30)",
        "now.getHours() == \(number % 24) && device.known && device.platform == \"android\"",
        "has(client.userAgent) && client.userAgent.lowerAscii().contains(\"bot-\(number)\")",
    ][number % 8]
    let then: PolicyRule.Effect = number % 2 == 1 ? .tag("rule.bench_\(number)", weight: number % 3) : .decide(.review)
    return PolicyRule(name: "bench-\(number)", when: when, then: then, mode: number % 4 < 2 ? .monitor : .enforce, eventID: nil)
}

func policyRuleBenchmarks() {
    let event = try! EventID(validating: 3301)
    let known = Device(
        appID: appID,
        id: device,
        clientDeviceID: "bench-device",
        mode: [],
        platform: .android,
        sdkVersion: "4.2.0",
        basic: nil,
        unique: nil,
        extra: nil,
        environment: [.proxy],
        firstSeen: now.addingTimeInterval(-86_400),
        lastSeen: now.addingTimeInterval(-60),
        lastAddress: "198.51.100.7"
    )
    let query = RiskQuery(
        appID: appID,
        eventID: event,
        accountID: try! AccountID(validating: "account-1"),
        clientAddress: IPAddress("198.51.100.7")!,
        tokenState: .fresh,
        claims: nil,
        at: now
    )
    let velocity = Velocity(deviceEventsLastMinute: 1, deviceAccountsLastDay: 1, accountDevicesLastDay: 1, ipDevicesLastHour: 2)
    let judged = JudgedQuery(query, state: .fresh, device: known, velocity: velocity, hardwareRequired: false)
    let thresholds = RiskRules.effective(app: nil, event: nil)
    let none = RiskPolicy(rules: [:], listEntries: [], events: [3301], attesters: [])
    let builtIn = RiskEngine.verdict(judged, policy: none, thresholds: thresholds)
    let compiled = (0..<200).map { try! benchPolicyRule($0).compiled() }
    let ruled = RiskPolicy(rules: [:], listEntries: [], events: [3301], attesters: [], compiledRules: compiled)
    let facts = RuleVariables.layout.values(RuleFacts.values(judged, listHits: [], verdict: builtIn))

    Benchmark("risk verdict, no policy rules") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(RiskEngine.verdict(judged, policy: none, thresholds: thresholds))
        }
    }
    Benchmark("risk verdict, bench/run's 200 policy rules") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(RiskEngine.verdict(judged, policy: ruled, thresholds: thresholds))
        }
    }
    // The server judges queries on every core at once, with one copy of the app's rules: a second
    // thread judging beside the measured one shows what sharing them costs (each reference counted on
    // one core and read on the other moves its cache line between them). Its own copy of the rules
    // beside it is the same work without the sharing.
    let ownCopy = RiskPolicy(
        rules: [:],
        listEntries: [],
        events: [3301],
        attesters: [],
        compiledRules: (0..<200).map { try! benchPolicyRule($0).compiled() }
    )
    for (name, other) in [("the same rules", ruled), ("its own copy", ownCopy)] {
        let beside = BesideThread { blackHole(RiskEngine.verdict(judged, policy: other, thresholds: thresholds)) }
        Benchmark(
            "risk verdict, bench/run's 200 policy rules, another thread judging with \(name)",
            configuration: .init(setup: { beside.start() }, teardown: { beside.stop() })
        ) { benchmark in
            for _ in benchmark.scaledIterations {
                blackHole(RiskEngine.verdict(judged, policy: ruled, thresholds: thresholds))
            }
        }
    }
    Benchmark("policy rule facts (once per query)") { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(RuleVariables.layout.values(RuleFacts.values(judged, listHits: [], verdict: builtIn)))
        }
    }
    let kinds = ["velocity", "new device", "network", "account", "tag in tags", "tags.exists", "hour and platform", "user agent"]
    for (kind, name) in kinds.enumerated() {
        let rule = compiled[8 + kind]
        Benchmark("policy rule: \(name)") { benchmark in
            for _ in benchmark.scaledIterations {
                var values = facts
                blackHole(rule.program.evaluate(&values))
            }
        }
    }
}

/// Runs `work` in a loop on a thread of its own between `start()` and `stop()`.
final class BesideThread: Sendable {
    let work: @Sendable () -> Void
    let running = Atomic<Bool>(false)
    let stopped = Atomic<Bool>(true)

    init(_ work: @escaping @Sendable () -> Void) { self.work = work }

    func start() {
        running.store(true, ordering: .sequentiallyConsistent)
        stopped.store(false, ordering: .sequentiallyConsistent)
        Thread.detachNewThread { [self] in
            while running.load(ordering: .relaxed) { work() }
            stopped.store(true, ordering: .sequentiallyConsistent)
        }
    }

    func stop() {
        running.store(false, ordering: .sequentiallyConsistent)
        while !stopped.load(ordering: .sequentiallyConsistent) { usleep(1_000) }
    }
}
