// Signatures: request signatures (wtoken, whash) and the secondary-verification signal.
// Serves seed 000 (the WAF app-protection SDK's vmpSign, vmpHash and cptCheck).

import Foundation
import GatehouseCore

extension SQLStore: SignatureStore {
    public func signingState(appID: AppID, deviceID: DeviceID, decidedAfter: Date) async throws(StoreError) -> SigningState? {
        let rows = try await database.query(
            """
            SELECT d.*,
              (SELECT count(*) FROM risk_lists WHERE app_id = $1 AND kind = 'deny' AND subject = 'device' AND value = $2) AS denied,
              (SELECT decision FROM risk_decisions WHERE app_id = $1 AND device_id = $2 AND decided_at > $3
                 ORDER BY decided_at DESC LIMIT 1) AS latest_decision
            FROM devices d WHERE d.app_id = $1 AND d.device_id = $2
            """,
            [.uuid(appID.rawValue), .text(deviceID.rawValue), .date(decidedAfter)]
        )
        guard let row = rows.first else { return nil }
        return SigningState(
            device: try Self.device(row),
            denied: try row.int("denied") > 0,
            latestDecision: try row.optionalText("latest_decision").flatMap(RiskDecision.init(rawValue:))
        )
    }

    public func recordSignatureFailure(appID: AppID, deviceID: DeviceID, reason: SignatureFailure, at now: Date) async throws(StoreError) {
        try await database.query(
            "INSERT INTO signature_failures (app_id, failure_id, device_id, reason, failed_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6)",
            [
                .uuid(appID.rawValue), .uuid(UUID.random()), .text(deviceID.rawValue), .text(reason.rawValue), .date(now),
                .date(now.addingTimeInterval(3600)),
            ]
        )
    }
}
