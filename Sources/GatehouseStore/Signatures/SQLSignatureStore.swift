// Signatures: request signatures (wtoken, whash) and the secondary-verification signal.
// Serves seed 000 (the WAF app-protection SDK's vmpSign, vmpHash and cptCheck).

import Foundation
import GatehouseCore

/// What a request signature's check reads of its device, and the failures it records.
public final class SQLSignatureStore: CapabilityStore {
    let database: any SQLDatabase
    let changes: StoreChanges

    init(database: any SQLDatabase, changes: StoreChanges) {
        self.database = database
        self.changes = changes
    }
}

extension SQLSignatureStore: SignatureStore {
    public func signingState(appID: AppID, deviceID: DeviceID, decidedAfter: Date) async throws(StoreError) -> SigningState? {
        let rows = try await database.query(
            """
            SELECT d.*,
              (SELECT count(*) FROM risk_lists WHERE app_id = \(.uuid(appID.rawValue)) AND kind = 'deny' AND subject = 'device' AND value =
                \(.text(deviceID.rawValue))) AS denied,
              (SELECT decision FROM risk_decisions WHERE app_id = \(.uuid(appID.rawValue)) AND device_id = \(.text(deviceID.rawValue)) AND
                decided_at > \(.date(decidedAfter))
                 ORDER BY decided_at DESC LIMIT 1) AS latest_decision
            FROM devices d WHERE d.app_id = \(.uuid(appID.rawValue)) AND d.device_id = \(.text(deviceID.rawValue))
            """
        )
        guard let row = rows.first else { return nil }
        return SigningState(
            device: try SQLDeviceRiskStore.device(row),
            denied: try row.int("denied") > 0,
            latestDecision: try row.optionalText("latest_decision").flatMap(RiskDecision.init(rawValue:))
        )
    }

    public func recordSignatureFailure(appID: AppID, deviceID: DeviceID, reason: SignatureFailure, at now: Date) async throws(StoreError) {
        try await database.query(
            """
            INSERT INTO signature_failures (app_id, failure_id, device_id, reason, failed_at, expires_at) VALUES (\(.uuid(appID.rawValue)),
              \(.uuid(UUID.random())), \(.text(deviceID.rawValue)), \(.text(reason.rawValue)), \(.date(now)),
              \(.date(now.addingTimeInterval(3600))))
            """
        )
    }
}

extension SQLSignatureStore: ExpiringRows {
    /// Failed-signature records past their expiry (counted with the nonces).
    func deleteExpired(_ round: RetentionRound, in locked: any SQLDatabase) async throws -> PurgeReport {
        var report = PurgeReport()
        report.nonces += try await deleteExpired(.signatureFailures, key: "failure_id", round, in: locked)
        return report
    }
}
