import Foundation
import GatehouseCore
import GatehouseStore

/// Re-keying: every stored secret moves from the current master key to a new one in one transaction
/// (`gatehouse master-key rotate`). Keys derived from the master key (ztoken MACs, device identities
/// and device keys, ALTCHA HMAC keys) change with it; docs/operations.md says what that means.
public struct MasterKeyOperations: Sendable {
    let store: SQLStore
    let clock: any GatehouseClock

    public init(store: SQLStore, clock: any GatehouseClock) {
        self.store = store
        self.clock = clock
    }

    /// - Returns: how many sealed values were moved to `next`.
    public func rotate(from current: SecretBox, to next: SecretBox, origin: ChangeOrigin) async throws -> Int {
        try current.verifyKeyCheck(try await store.masterKeyCheck(orInsert: current.makeKeyCheck()))
        let rotation = try MasterKeyRotation(current: current, next: next)
        let values = try await store.admin.sealedValues()
        var replacements: [(old: SealedValue, new: SealedValue)] = []
        for value in values { replacements.append((value, try rotation.reseal(value))) }
        let audit = origin.entry(
            at: clock.now(),
            action: "master_key.rotate",
            targetType: "master_key",
            targetID: "master_key",
            appID: nil,
            before: nil,
            after: ["resealed": .int(values.count)]
        )
        try await store.admin.replaceSealedValues(replacements, keyCheck: next.makeKeyCheck(), audit: audit)
        return values.count
    }
}
