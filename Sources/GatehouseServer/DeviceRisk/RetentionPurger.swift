import Foundation
import GatehouseCore
import GatehouseStore
import Logging
import ServiceLifecycle

/// Deletes ztokens and decisions past their app's retention, and expired nonces, every `interval`.
/// With many instances, the store's purge lock lets one run at a time; the others skip that round.
struct RetentionPurger: Service {
    let store: any DeviceRiskStore
    let clock: any GatehouseClock
    let interval: Duration
    let logger: Logger

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                do {
                    try await Task.sleep(for: interval)
                } catch {
                    return
                }
                await purgeOnce()
            }
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
                    "attestations": "\(report.attestations)",
                    "captchas": "\(report.captchas)",
                ]
            )
        } catch {
            logger.warning("retention purge failed; will retry", metadata: ["error": "\(error)"])
        }
    }
}
