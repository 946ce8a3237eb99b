import ArgumentParser
import Foundation
import GatehouseCore

/// One retention round by hand: for deployments that turn the instances' purgers off
/// (GATEHOUSE_PURGE_INTERVAL_SECONDS=0) and run it from a scheduler instead, and for measuring it.
struct Purge: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Run one retention purge now (the one the instances run every GATEHOUSE_PURGE_INTERVAL_SECONDS), under the purge lock."
    )

    @OptionGroup var common: CommonOptions

    func run() async throws {
        let started = ContinuousClock.now
        let report = try await withOperatorStore(common) { store, _, _ in try await store.retention.purgeExpired(at: SystemClock().now()) }
        let seconds = (ContinuousClock.now - started) / .milliseconds(1) / 1_000
        guard let report else {
            print("skipped: another instance holds the purge lock")
            return
        }
        print(
            String(
                format:
                    "purged in %.3f s: %d decisions, %d ztokens, %d nonces, %d attestations, %d captchas, %d credentials, %d velocity pairs by rows; %d ranges dropped, %d created",
                seconds,
                report.decisions,
                report.ztokens,
                report.nonces,
                report.attestations,
                report.captchas,
                report.credentials,
                report.velocityEdges,
                report.partitions.dropped,
                report.partitions.created
            )
        )
    }
}
