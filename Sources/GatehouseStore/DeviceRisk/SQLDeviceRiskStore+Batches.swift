import Foundation
import GatehouseCore

/// Who was seen with whom, for the distinct counts of a risk query (migration 0012).
struct VelocityEdge: Hashable, Comparable, Sendable {
    enum Kind: Int {
        case deviceAccounts = 1
        case accountDevices = 2
        case addressDevices = 3
    }

    let appID: AppID
    let kind: Kind
    let subject: String
    let member: String

    /// A consumed token's three pairs: its device with the query's account, the account with the
    /// device, the query's address with the device.
    static func pairs(of item: PendingConsumption) -> [VelocityEdge] {
        let (app, device, account) = (item.query.appID, item.claims.deviceID.rawValue, item.query.accountID.rawValue)
        return [
            VelocityEdge(appID: app, kind: .deviceAccounts, subject: device, member: account),
            VelocityEdge(appID: app, kind: .accountDevices, subject: account, member: device),
            VelocityEdge(appID: app, kind: .addressDevices, subject: item.query.clientAddress.description, member: device),
        ]
    }

    /// The order rows are written in, the same in every statement.
    static func < (left: VelocityEdge, right: VelocityEdge) -> Bool {
        (left.kind.rawValue, left.subject, left.member, left.appID) < (right.kind.rawValue, right.subject, right.member, right.appID)
    }
}

/// One SDK nonce to record, refused if the app has seen it within its window.
struct NonceUse: Sendable {
    let appID: AppID
    let nonce: String
    let expiresAt: Date
}

extension SQLDeviceRiskStore {
    /// Runs a group-committed write, keeping the store's one error type.
    static func batched<T: Sendable>(_ body: () async throws -> T) async throws(StoreError) -> T {
        do {
            return try await body()
        } catch let error as StoreError {
            throw error
        } catch {
            throw .unavailable(String(describing: type(of: error)))
        }
    }

    /// - Returns: for each use, in order, whether it was the nonce's first (a nonce twice in one batch:
    ///   the first only).
    static func insertNonces(_ uses: [NonceUse], in database: any SQLDatabase) async throws(StoreError) -> [Bool] {
        let values = uses.map { use -> SQL in "(\(use.appID.rawValue), \(use.nonce), \(use.expiresAt))" }
        let rows = try await database.query(
            """
            INSERT INTO sdk_nonces (app_id, nonce, expires_at) VALUES \(SQL.joined(values, separator: ", ")) ON CONFLICT DO NOTHING RETURNING
              app_id, nonce
            """
        )
        var inserted = Set<String>()
        for row in rows { inserted.insert("\(try row.uuid("app_id")) \(try row.text("nonce"))") }
        return uses.map { use in inserted.remove("\(use.appID.rawValue) \(use.nonce)") != nil }
    }
}
