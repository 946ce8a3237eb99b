import Foundation
import GatehouseCore

/// The device keys hardware attestation vouched for.
public protocol AttestedKeyStore: Sendable {
    /// Keeps a newly attested key; false if the app already holds a key with this id (a key is
    /// attested once: App Attest refuses to attest a key twice, and a replayed attestation must not
    /// reset its counter).
    func insertAttestedKey(_ key: AttestedDeviceKey) async throws(StoreError) -> Bool
    func attestedKey(appID: AppID, keyID: String) async throws(StoreError) -> AttestedDeviceKey?
    /// Moves the key's counter to `counter` if it is greater than the stored one, in one statement:
    /// of concurrent assertions with the same counter, on any number of instances, one is true.
    func advanceCounter(appID: AppID, keyID: String, to counter: UInt32, at time: Date) async throws(StoreError) -> Bool
}

extension SQLStore: AttestedKeyStore {
    public func insertAttestedKey(_ key: AttestedDeviceKey) async throws(StoreError) -> Bool {
        guard let facts = try? JSONEncoder().encode(key.facts) else { throw .corruptRow("attested key facts") }
        let rows = try await database.query(
            """
            INSERT INTO attested_keys (app_id, key_id, platform, attest_id, device_id, public_key, counter, facts, receipt,
                attested_at, last_used_at)
            VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
            ON CONFLICT (app_id, key_id) DO NOTHING RETURNING key_id
            """,
            [
                .uuid(key.appID.rawValue), .text(key.keyID), .text(key.platform.rawValue), .text(key.attestID.rawValue),
                .optional(key.deviceID?.rawValue), .bytes(key.publicKey), .int(Int64(key.counter)),
                .text(String(decoding: facts, as: UTF8.self)), key.receipt.map(SQLValue.bytes) ?? .null, .date(key.attestedAt),
                .date(key.lastUsedAt),
            ]
        )
        return !rows.isEmpty
    }

    public func attestedKey(appID: AppID, keyID: String) async throws(StoreError) -> AttestedDeviceKey? {
        guard
            let row = try await database.query(
                "SELECT * FROM attested_keys WHERE app_id = $1 AND key_id = $2",
                [.uuid(appID.rawValue), .text(keyID)]
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
            UPDATE attested_keys SET counter = $3, last_used_at = $4
            WHERE app_id = $1 AND key_id = $2 AND counter < $3 RETURNING key_id
            """,
            [.uuid(appID.rawValue), .text(keyID), .int(Int64(counter)), .date(time)]
        )
        return !rows.isEmpty
    }
}
