import Crypto
import Foundation
import GatehouseSigning

/// Mints ztokens on the device, offline and synchronously, as the seed's `getZInfoWithEvent` does:
/// from the key and context of the last device start (`ZTokenFormat`). A lock rather than the actor:
/// the call is synchronous, and an app calls it from whatever thread its protected action runs on.
final class ZTokenMinter: @unchecked Sendable {
    /// What one device start handed over.
    struct Grant {
        let key: SymmetricKey
        let context: [UInt8]
        let ttlSeconds: Int
        let events: Set<Int>
        /// Server time minus device time at start, added to the device's clock for each issue time.
        let clockOffset: TimeInterval
    }

    private let lock = NSLock()
    private var grant: Grant?

    func update(_ grant: Grant) {
        lock.lock()
        defer { lock.unlock() }
        self.grant = grant
    }

    func mint(event: Int, account: String, now: Date = Date()) throws -> String {
        lock.lock()
        let grant = self.grant
        lock.unlock()
        guard let grant else { throw GatehouseClientError.notStarted }
        guard grant.events.contains(event) else {
            throw GatehouseClientError.sdk(code: -10, reason: "event_not_registered", message: "Event \(event) is not registered for this app.")
        }
        // The server's rule for account ids (C0 and C1 controls and DEL refused), so that a token
        // minted here is never refused there for its account.
        guard (1...128).contains(account.unicodeScalars.count),
            !account.unicodeScalars.contains(where: { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
        else {
            throw GatehouseClientError.sdk(
                code: -10,
                reason: "invalid_account_id",
                message: "accountId is 1 to 128 characters without control characters."
            )
        }
        var tokenID = [UInt8](repeating: 0, count: 12)
        for index in tokenID.indices { tokenID[index] = UInt8.random(in: .min ... .max) }
        return ZTokenFormat.mint(
            tokenID: tokenID,
            issuedAt: UInt32(clamping: Int(now.timeIntervalSince1970 + grant.clockOffset)),
            ttlSeconds: UInt16(clamping: grant.ttlSeconds),
            event: event,
            account: account,
            context: grant.context,
            key: grant.key
        )
    }
}
