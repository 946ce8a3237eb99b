import Foundation
import GatehouseCore
import GatehouseOperations
import GatehouseStore
import Logging
import ServiceLifecycle

/// Runs the store's retention round (`RetentionStore`: every capability's expired rows) every
/// `interval`; with many instances, the store's purge lock lets one run at a time and the others skip
/// that round. It also keeps the partitioned tables' time ranges ready on PostgreSQL (before the server
/// starts, then at least every 10 minutes whatever the purge interval, and where this instance does
/// not purge): the six-hour ranges are made two ahead, so a purge interval past 12 hours would
/// otherwise let rows outrun them into the default range.
struct RetentionPurger: Service {
    let store: any RetentionStore
    let clock: any GatehouseClock
    let interval: Duration
    let purges: Bool
    let logger: Logger

    /// How often the ranges are kept ready at least (seconds).
    static let keeperInterval = 600

    init(_ configuration: GatehouseConfiguration, store: any RetentionStore, clock: any GatehouseClock, logger: Logger) {
        let purges = configuration.purgeIntervalSeconds > 0
        self.store = store
        self.clock = clock
        self.interval = .seconds(purges ? configuration.purgeIntervalSeconds : Self.keeperInterval)
        self.purges = purges
        self.logger = logger
    }

    /// Wakes every purge interval or keeper interval, whichever is shorter; purges when a purge
    /// interval has passed (which keeps the ranges too), keeps the ranges otherwise.
    func run() async throws {
        let wake = min(interval, .seconds(Self.keeperInterval))
        await cancelWhenGracefulShutdown {
            var sincePurge = Duration.zero
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: wake)
                } catch {
                    return
                }
                sincePurge += wake
                if purges && sincePurge >= interval {
                    sincePurge = .zero
                    await purgeOnce()
                } else {
                    await keepPartitions()
                }
            }
        }
    }

    /// Creates the ranges due; a failure is logged and waits for the next round.
    func keepPartitions() async {
        do {
            if let report = try await store.keepPartitions(at: clock.now()), report.created > 0 {
                logger.info("time ranges created", metadata: ["created": "\(report.created)"])
            }
        } catch {
            logger.warning("keeping time ranges failed; will retry", metadata: ["error": "\(error)"])
        }
    }

    func purgeOnce() async {
        do {
            guard let report = try await store.purgeExpired(at: clock.now()) else {
                logger.debug("retention purge skipped: another instance holds the lock")
                return
            }
            logger.info(
                "retention purge",
                metadata: [
                    "ztokens": "\(report.ztokens)", "decisions": "\(report.decisions)", "nonces": "\(report.nonces)",
                    "attestations": "\(report.attestations)", "captchas": "\(report.captchas)",
                    "rangesCreated": "\(report.partitions.created)", "rangesDropped": "\(report.partitions.dropped)",
                ]
            )
        } catch {
            logger.warning("retention purge failed; will retry", metadata: ["error": "\(error)"])
        }
    }
}
