import Foundation
import GatehouseCore

/// What one risk query's decision needs read before its token is consumed.
struct ConsumptionRead: Sendable {
    let device: Device?
    let velocity: Velocity
    /// The query's own velocity pairs that were written recently enough not to be written again
    /// (`SQLDeviceRiskStore.velocityPairRewriteAfter`).
    let freshPairs: Set<VelocityEdge>
}

/// The risk query's read, for a whole group commit in one statement: every query's device, its bounded
/// velocity counts and when its own pairs were last written. One statement for the batch instead of
/// one per query saves a round trip and an execution per query (each query's read had been its own
/// statement, PostgreSQL's largest share of a query's cost).
///
/// Each count walks its index newest first (`ORDER BY` the index's time), so that `LIMIT` stops it
/// whatever the statistics say: with rows for one subject bunched behind an attack's, a planner that
/// expects matches spread evenly would rather scan the table, past every row of the attack. A count
/// stops at its threshold: exact up to it, "over it" past, at the same cost whatever an attack piled
/// into the window. A statement takes one set of thresholds (SQLite takes no per-row `LIMIT`), so the
/// batch's queries are read in one statement per set of thresholds they are judged by: one for most
/// batches, and an app whose thresholds are high (up to a million) makes no other app's queries read
/// that far. A count leaves out the query's own token or pair (not written yet), which the velocity
/// adds back. Each of the account's devices is looked up on its own (a scalar subquery, which
/// PostgreSQL plans with both of its key's columns bound): as a join, the plan made once for the
/// prepared statement probed the devices by app alone and filtered every device of the app for each of
/// the account's (64 times an app's devices for an account an attacker gave 64 devices).
extension SQLDeviceRiskStore {
    /// How old a velocity pair's time may be before a consumption writes it again. A pair seen again
    /// within this long is not rewritten: most of a busy app's queries repeat a device's, account's
    /// and address's pairs, and each rewrite was a row version with an entry in both of the table's
    /// indexes (its time is in one of them, so the update is never HOT). A pair's time
    /// is therefore up to this much older than its newest use, and it can leave a window (an hour, a
    /// day) this much early (docs/risk.md).
    static let velocityPairRewriteAfter: TimeInterval = 60

    /// The account's newest devices of the day, at most this many, are asked whether they attested that day.
    private static let accountDevicesAsked = 64

    /// The read's name on each PostgreSQL connection: its text is the same for any batch.
    enum Statement: PreparedSQL {
        static let name = "gatehouse_consumption_read_v1"
    }

    /// The read that also finds each bridge token's page (`SQLDeviceRiskStore+ConsumingWrite`).
    enum PagesStatement: PreparedSQL {
        static let name = "gatehouse_consumption_read_pages_v1"
    }

    /// The batch's reads, each with its token's page if it has one, outside any transaction: the
    /// batch's one write then consumes the tokens and stores the decisions.
    static func readWithPages(
        _ pending: [PendingConsumption],
        in database: any SQLDatabase
    ) async throws(StoreError) -> [(ConsumptionRead, page: String?)] {
        try await preferGenericPlan(in: database)
        let rows = try await database.query(PagesStatement.self, consumptionReadStatement(pending, dialect: .postgres, pages: true))
        return try numbered(rows, count: pending.count) { number, row throws(StoreError) in
            (try consumptionRead(row, for: pending[number]), try row.optionalText("page_url"))
        }
    }

    /// One value for each of a read's `count` queries, from its rows (numbered by `n`, one each).
    private static func numbered<Value>(
        _ rows: [SQLRow],
        count: Int,
        _ value: (Int, SQLRow) throws(StoreError) -> Value
    ) throws(StoreError) -> [Value] {
        var values = [Value?](repeating: nil, count: count)
        for row in rows {
            let number = Int(try row.int("n"))
            guard values.indices.contains(number), values[number] == nil else { throw .corruptRow("the consumption read's row \(number)") }
            values[number] = try value(number, row)
        }
        return try values.map { value throws(StoreError) in
            guard let value else { throw .corruptRow("the consumption read returned too few rows") }
            return value
        }
    }

    /// Left to itself, PostgreSQL plans a prepared statement anew on each run while its plan for the
    /// values at hand looks cheaper than the one for any values; for the read, with an array's length
    /// known, it always does, and planning is most of the read's cost. Its one plan for any values walks
    /// the same indexes (`DeviceRiskStoreTests`). For the rest of the transaction; the group commits'
    /// own connections were opened with it (`SQLDatabase.forBatches`), which saves their batches this
    /// round trip.
    static func preferGenericPlan(in transaction: any SQLDatabase) async throws(StoreError) {
        guard transaction.dialect == .postgres, !transaction.plansGenerically else { return }
        try await transaction.query("SET LOCAL plan_cache_mode = force_generic_plan")
    }

    /// The indices of the queries judged by each set of thresholds: one statement reads each set.
    static func readGroups(_ pending: [PendingConsumption]) -> [ReadLimits: [Int]] {
        var groups: [ReadLimits: [Int]] = [:]
        for (index, item) in pending.enumerated() { groups[ReadLimits(item.rules), default: []].append(index) }
        return groups
    }

    /// Runs in the batch's transaction.
    static func readForConsumption(
        _ pending: [PendingConsumption],
        in database: any SQLDatabase
    ) async throws(StoreError) -> [ConsumptionRead] {
        try await preferGenericPlan(in: database)
        var reads = [ConsumptionRead?](repeating: nil, count: pending.count)
        for indices in readGroups(pending).values {
            let group = indices.map { pending[$0] }
            let rows = try await database.query(Statement.self, consumptionReadStatement(group, dialect: database.dialect))
            let groupReads = try numbered(rows, count: group.count) { number, row throws(StoreError) in try consumptionRead(row, for: group[number]) }
            for (index, read) in zip(indices, groupReads) { reads[index] = read }
        }
        // Each index is in exactly one group.
        return reads.compactMap { $0 }
    }

    /// The thresholds a read counts up to: the same for every query of one statement.
    struct ReadLimits: Hashable {
        let deviceEvents, deviceAccounts, accountDevices, ipDevices: Int
        /// One past each farm threshold: the farm signal compares the count with it.
        let addressAttestations, networkAttestations, accountAttestations: Int

        init(_ rules: EffectiveRiskRules) {
            (deviceEvents, deviceAccounts, accountDevices, ipDevices) = (
                rules.maxDeviceEventsPerMinute, rules.maxDeviceAccountsPerDay, rules.maxAccountDevicesPerDay, rules.maxIPDevicesPerHour
            )
            (addressAttestations, networkAttestations, accountAttestations) = (
                rules.maxAddressAttestationsPerHour + 1, rules.maxNetworkAttestationsPerHour + 1, rules.maxAccountAttestationsPerDay + 1
            )
        }
    }

    /// The statement for queries judged by the same thresholds (the first query's). PostgreSQL gets
    /// each of the queries' values as one array (`unnest`), so that its text is the same for every
    /// batch and it is planned once per connection (planning it took 1.5 ms, more than executing it for
    /// 8 queries). SQLite, which plans in microseconds and binds no arrays, gets them as rows of values.
    ///
    /// - Parameter pages: PostgreSQL only: also reads each token's page (`page_url`, NULL for a
    ///   token no bridge minted).
    static func consumptionReadStatement(_ pending: [PendingConsumption], dialect: SQLDialect, pages: Bool = false) -> SQL {
        let limits = ReadLimits(pending.first?.rules ?? RiskRules.defaults)
        var columns = ["n", "app_id", "device_id", "account_id", "address", "network", "minute_ago", "hour_ago", "day_ago", "rewrite_before"]
        let asked: SQL
        var page: SQL = ""
        switch dialect {
        case .postgres:
            asked = postgresArrays(pending, pages: pages)
            if pages { (columns, page) = (columns + ["token_id"], pageColumn) }
        case .sqlite:
            let rows = pending.enumerated().map { number, item -> SQL in
                let query = item.query
                return """
                    (\(number), \(query.appID.rawValue), \(item.claims.deviceID.rawValue), \(query.accountID.rawValue), \(query.clientAddress.description),
                     \(AttestationFarm.network(of: query.clientAddress)), \(query.at.addingTimeInterval(-60)), \(query.at.addingTimeInterval(-3_600)),
                     \(query.at.addingTimeInterval(-86_400)), \(query.at.addingTimeInterval(-velocityPairRewriteAfter)))
                    """
            }
            asked = "VALUES \(SQL.joined(rows, separator: ", "))"
        }
        return """
            WITH asked (\(columns: columns)) AS (\(asked))
            SELECT asked.n, devices.app_id, devices.device_id, devices.client_device_id, devices.collect_type, devices.platform,
              devices.sdk_version, devices.model, devices.os_version, devices.screen, devices.idfv, devices.idfa, devices.wifi_ssid,
              devices.wifi_bssid, devices.environment, devices.first_seen, devices.last_seen, devices.last_address, devices.key_epoch,
              devices.hardware_facts, devices.hardware_attested_at, devices.attestation_failed_at, devices.integrity_facts, devices.integrity_at,
              (SELECT count(*) FROM (SELECT 1 FROM consumed_ztokens AS c WHERE c.app_id = asked.app_id AND c.device_id = asked.device_id
                AND c.consumed_at > asked.minute_ago ORDER BY c.consumed_at DESC LIMIT \(limits.deviceEvents)) AS e)
                AS device_events,
              (SELECT count(*) FROM (SELECT 1 FROM velocity_edges AS v WHERE v.app_id = asked.app_id AND v.kind = 1 AND v.subject = asked.device_id
                AND v.last_seen > asked.day_ago AND v.member <> asked.account_id ORDER BY v.last_seen DESC
                LIMIT \(limits.deviceAccounts)) AS d) AS device_accounts,
              (SELECT count(*) FROM (SELECT 1 FROM velocity_edges AS v WHERE v.app_id = asked.app_id AND v.kind = 2 AND v.subject = asked.account_id
                AND v.last_seen > asked.day_ago AND v.member <> asked.device_id ORDER BY v.last_seen DESC
                LIMIT \(limits.accountDevices)) AS a) AS account_devices,
              (SELECT count(*) FROM (SELECT 1 FROM velocity_edges AS v WHERE v.app_id = asked.app_id AND v.kind = 3 AND v.subject = asked.address
                AND v.last_seen > asked.hour_ago AND v.member <> asked.device_id ORDER BY v.last_seen DESC
                LIMIT \(limits.ipDevices)) AS i) AS ip_devices,
              (SELECT count(*) FROM (SELECT 1 FROM attestation_edges AS t WHERE t.app_id = asked.app_id AND t.kind = 1 AND t.subject = asked.address
                AND t.last_seen > asked.hour_ago ORDER BY t.last_seen DESC LIMIT \(limits.addressAttestations)) AS aa)
                AS address_attestations,
              (SELECT count(*) FROM (SELECT 1 FROM attestation_edges AS t WHERE t.app_id = asked.app_id AND t.kind = 2 AND t.subject = asked.network
                AND t.last_seen > asked.hour_ago ORDER BY t.last_seen DESC LIMIT \(limits.networkAttestations)) AS na)
                AS network_attestations,
              (SELECT count(*) FROM (SELECT 1 FROM (SELECT v.member FROM velocity_edges AS v WHERE v.app_id = asked.app_id AND v.kind = 2
                  AND v.subject = asked.account_id AND v.last_seen > asked.day_ago ORDER BY v.last_seen DESC LIMIT \(accountDevicesAsked)) AS m
                WHERE (SELECT attested.hardware_attested_at > asked.day_ago OR attested.integrity_at > asked.day_ago FROM devices AS attested
                  WHERE attested.app_id = asked.app_id AND attested.device_id = m.member)
                LIMIT \(limits.accountAttestations)) AS ac) AS account_attestations,
              \(ownPairSeen(kind: 1, subject: "device_id", member: "account_id")) AS device_account_seen,
              \(ownPairSeen(kind: 2, subject: "account_id", member: "device_id")) AS account_device_seen,
              \(ownPairSeen(kind: 3, subject: "address", member: "device_id")) AS address_device_seen\(page)
            FROM asked LEFT JOIN devices ON devices.app_id = asked.app_id AND devices.device_id = asked.device_id
            """
    }

    /// The last column of the read with pages. (Whether a token was consumed before is not read:
    /// the write finds it, and with the statement planned once for any values PostgreSQL scanned the
    /// newest of `consumed_ztokens`' partitions whole, its statistics taken while it was empty.)
    private static let pageColumn: SQL = """
        ,
          (SELECT p.page_url FROM ztoken_pages AS p WHERE p.app_id = asked.app_id AND p.token_id = asked.token_id) AS page_url
        """

    /// The batch's values as one array each, in `asked`'s columns, so that the statement's text is the
    /// same for every batch; with pages, with each token's id.
    private static func postgresArrays(_ pending: [PendingConsumption], pages: Bool) -> SQL {
        let queries = pending.map(\.query)
        let consumption: SQL = pages ? ", \(.texts(pending.map(\.tokenID)))" : ""
        return """
            SELECT * FROM unnest(\(.ints(pending.indices.map(Int64.init))), \(.uuids(queries.map(\.appID.rawValue))),
              \(.texts(pending.map(\.claims.deviceID.rawValue))), \(.texts(queries.map(\.accountID.rawValue))),
              \(.texts(queries.map(\.clientAddress.description))), \(.texts(queries.map { AttestationFarm.network(of: $0.clientAddress) })),
              \(.dates(queries.map { $0.at.addingTimeInterval(-60) })), \(.dates(queries.map { $0.at.addingTimeInterval(-3_600) })),
              \(.dates(queries.map { $0.at.addingTimeInterval(-86_400) })), \(.dates(queries.map { $0.at.addingTimeInterval(-velocityPairRewriteAfter) }))\(consumption))
            """
    }

    /// When the query's own pair was last written, if it is among the subject's newest pairs of the
    /// last `velocityPairRewriteAfter`; NULL (written again) if not. Read through the subject's newest
    /// first, not the pair's key: with the pair's values known only per row, PostgreSQL may pick the
    /// subject's time index for a key lookup and walk every pair an attack gave that subject. A busy
    /// subject's own pair that is not among its newest few is written again, as before.
    private static func ownPairSeen(kind: Int, subject: String, member: String) -> SQL {
        """
        (SELECT max(s.last_seen) FROM (SELECT v.member, v.last_seen FROM velocity_edges AS v WHERE v.app_id = asked.app_id AND v.kind = \(kind)
          AND v.subject = asked.\(identifier: subject) AND v.last_seen > asked.rewrite_before ORDER BY v.last_seen DESC
          LIMIT \(newestPairsAsked)) AS s WHERE s.member = asked.\(identifier: member))
        """
    }

    /// How many of a subject's newest pairs are looked through for the query's own.
    private static let newestPairsAsked = 16

    private static func consumptionRead(_ row: SQLRow, for item: PendingConsumption) throws(StoreError) -> ConsumptionRead {
        func count(_ column: String) throws(StoreError) -> Int { Int(try row.int(column)) }
        var velocity = Velocity(
            deviceEventsLastMinute: try count("device_events") + 1,
            deviceAccountsLastDay: try count("device_accounts") + 1,
            accountDevicesLastDay: try count("account_devices") + 1,
            ipDevicesLastHour: try count("ip_devices") + 1
        )
        velocity.attestations = AttestationCounts(
            addressLastHour: try count("address_attestations"),
            networkLastHour: try count("network_attestations"),
            accountLastDay: try count("account_attestations")
        )
        let pairs = VelocityEdge.pairs(of: item)
        let seen = [
            try row.optionalDate("device_account_seen"), try row.optionalDate("account_device_seen"), try row.optionalDate("address_device_seen"),
        ]
        let rewriteBefore = item.query.at.addingTimeInterval(-velocityPairRewriteAfter)
        var fresh = Set<VelocityEdge>()
        for (pair, seen) in zip(pairs, seen) where (seen.map { $0 > rewriteBefore }) ?? false { fresh.insert(pair) }
        return ConsumptionRead(device: try row.isNull("device_id") ? nil : try device(row), velocity: velocity, freshPairs: fresh)
    }
}
