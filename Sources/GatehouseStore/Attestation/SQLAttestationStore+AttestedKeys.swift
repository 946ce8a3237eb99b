import Foundation
import GatehouseCore

/// The device keys hardware attestation vouched for.
public protocol AttestedKeyStore: Sendable {
    /// Keeps a newly attested key; false if the app already holds a key with this id (a key is
    /// attested once: App Attest refuses to attest a key twice, and a replayed attestation must not
    /// reset its counter).
    /// The key's device row takes its hardware facts in the same transaction (risk queries read them
    /// there), and the farm counts their sighting of a new key.
    func insertAttestedKey(_ key: AttestedDeviceKey, sighting: AttestationFarm.Sighting?) async throws(StoreError) -> Bool
    /// The device's latest Play Integrity verdict, on its row, and the farm counts' sighting of the
    /// device, in one transaction.
    func recordIntegrity(
        _ state: PlayIntegrityState,
        appID: AppID,
        deviceID: DeviceID,
        sighting: AttestationFarm.Sighting?
    ) async throws(StoreError)
    /// Notes on the device row that a hardware attestation or assertion was refused (`attestation.failed`).
    func recordAttestationFailure(appID: AppID, deviceID: DeviceID, at time: Date) async throws(StoreError)
    func attestedKey(appID: AppID, keyID: String) async throws(StoreError) -> AttestedDeviceKey?
    /// Moves the key's counter to `counter` if it is greater than the stored one, in one statement:
    /// of concurrent assertions with the same counter, on any number of instances, one is true.
    func advanceCounter(appID: AppID, keyID: String, to counter: UInt32, at time: Date) async throws(StoreError) -> Bool
}

extension SQLAttestationStore: AttestedKeyStore {
    public func insertAttestedKey(_ key: AttestedDeviceKey, sighting: AttestationFarm.Sighting?) async throws(StoreError) -> Bool {
        guard let encoded = try? JSONEncoder().encode(key.facts) else { throw .corruptRow("attested key facts") }
        let facts = String(decoding: encoded, as: UTF8.self)
        do {
            return try await database.transaction { transaction in
                let rows = try await transaction.query(
                    """
                    INSERT INTO attested_keys (app_id, key_id, platform, attest_id, device_id, public_key, counter, facts, receipt,
                        attested_at, last_used_at)
                    VALUES (\(.uuid(key.appID.rawValue)), \(.text(key.keyID)), \(.text(key.platform.rawValue)), \(.text(key.attestID.rawValue)),
                      \(.optional(key.deviceID?.rawValue)), \(.bytes(key.publicKey)), \(.int(Int64(key.counter))), \(.text(facts)),
                      \(key.receipt.map(SQLValue.bytes) ?? .null), \(.date(key.attestedAt)), \(.date(key.lastUsedAt)))
                    ON CONFLICT (app_id, key_id) DO NOTHING RETURNING key_id
                    """
                )
                guard !rows.isEmpty else { return false }
                if let device = key.deviceID {
                    try await transaction.query(
                        """
                        UPDATE devices SET hardware_facts = \(.text(facts)), hardware_attested_at = \(.date(key.attestedAt)) WHERE app_id =
                          \(.uuid(key.appID.rawValue)) AND device_id = \(.text(device.rawValue))
                        """
                    )
                }
                try await Self.insertSighting(sighting, appID: key.appID, at: key.attestedAt, in: transaction)
                return true
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw .unavailable(String(describing: type(of: error)))
        }
    }

    public func recordIntegrity(
        _ state: PlayIntegrityState,
        appID: AppID,
        deviceID: DeviceID,
        sighting: AttestationFarm.Sighting?
    ) async throws(StoreError) {
        guard let encoded = try? JSONEncoder().encode(state.facts) else { throw .corruptRow("Play Integrity facts") }
        do {
            try await database.transaction { transaction in
                try await transaction.query(
                    """
                    UPDATE devices SET integrity_facts = \(.text(String(decoding: encoded, as: UTF8.self))), integrity_at = \(.date(state.at))
                    WHERE app_id = \(.uuid(appID.rawValue)) AND device_id = \(.text(deviceID.rawValue))
                    """
                )
                try await Self.insertSighting(sighting, appID: appID, at: state.at, in: transaction)
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw .unavailable(String(describing: type(of: error)))
        }
    }

    /// One row per (address, member) and (network, member) pair, its time moved forward: a device that
    /// attests a thousand times is one member, so a count reads at most its threshold of rows.
    static func insertSighting(
        _ sighting: AttestationFarm.Sighting?,
        appID: AppID,
        at time: Date,
        in database: any SQLDatabase
    ) async throws(StoreError) {
        guard let sighting else { return }
        let app = appID.rawValue
        try await database.query(
            """
            INSERT INTO attestation_edges (app_id, kind, subject, member, last_seen)
            VALUES (\(app), 1, \(sighting.address), \(sighting.member), \(time)), (\(app), 2, \(sighting.network), \(sighting.member), \(time))
            ON CONFLICT (app_id, kind, subject, member) DO UPDATE SET last_seen = excluded.last_seen
            WHERE attestation_edges.last_seen < excluded.last_seen
            """
        )
    }

    public func recordAttestationFailure(appID: AppID, deviceID: DeviceID, at time: Date) async throws(StoreError) {
        try await database.query(
            """
            UPDATE devices SET attestation_failed_at = \(.date(time)) WHERE app_id = \(.uuid(appID.rawValue)) AND device_id =
              \(.text(deviceID.rawValue))
            """
        )
    }

    public func attestedKey(appID: AppID, keyID: String) async throws(StoreError) -> AttestedDeviceKey? {
        guard
            let row = try await database.query(
                "SELECT * FROM attested_keys WHERE app_id = \(.uuid(appID.rawValue)) AND key_id = \(.text(keyID))"
            ).first
        else { return nil }
        guard let platform = AttestedDeviceKey.Platform(rawValue: try row.text("platform")),
            let attestID = try? AttestID(validating: try row.text("attest_id")),
            let facts = try? JSONDecoder().decode(HardwareFacts.self, from: Data(try row.text("facts").utf8)),
            let counter = UInt32(exactly: try row.int("counter"))
        else { throw .corruptRow("attested key row") }
        let deviceID = try row.optionalText("device_id").flatMap { try? DeviceID(validating: $0) }
        return AttestedDeviceKey(
            appID: appID,
            keyID: keyID,
            platform: platform,
            attestID: attestID,
            deviceID: deviceID,
            publicKey: try row.bytes("public_key"),
            counter: counter,
            facts: facts,
            receipt: try row.isNull("receipt") ? nil : try row.bytes("receipt"),
            attestedAt: try row.date("attested_at"),
            lastUsedAt: try row.date("last_used_at")
        )
    }

    public func advanceCounter(appID: AppID, keyID: String, to counter: UInt32, at time: Date) async throws(StoreError) -> Bool {
        let rows = try await database.query(
            """
            UPDATE attested_keys SET counter = \(.int(Int64(counter))), last_used_at = \(.date(time))
            WHERE app_id = \(.uuid(appID.rawValue)) AND key_id = \(.text(keyID)) AND counter < \(.int(Int64(counter))) RETURNING key_id
            """
        )
        return !rows.isEmpty
    }
}
