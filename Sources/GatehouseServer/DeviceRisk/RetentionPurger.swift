import Foundation
import GatehouseCore
import GatehouseStore
import Logging
import ServiceLifecycle

/// Deletes consumed ztoken ids and decisions past their app's retention, and expired nonces, every
/// `interval`; with many instances, the store's purge lock lets one run at a time and the others skip
/// that round. It also keeps the partitioned tables' time ranges ready on PostgreSQL (before the server
/// starts, then every round) even where this instance does not purge: rows with no range to go to
/// would pile up in the default one.
struct RetentionPurger: Service {
    let store: any DeviceRiskStore & StoreMaintenance
    let clock: any GatehouseClock
    let interval: Duration
    let purges: Bool
    let logger: Logger

    /// How often an instance that does not purge keeps the ranges ready (seconds).
    static let keeperInterval = 600

    init(_ configuration: GatehouseConfiguration, store: any DeviceRiskStore & StoreMaintenance, clock: any GatehouseClock, logger: Logger) {
        let purges = configuration.purgeIntervalSeconds > 0
        self.store = store
        self.clock = clock
        self.interval = .seconds(purges ? configuration.purgeIntervalSeconds : Self.keeperInterval)
        self.purges = purges
        self.logger = logger
    }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: interval)
                } catch {
                    return
                }
                if purges { await purgeOnce() } else { await keepPartitions() }
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
