import Foundation
import GatehouseCore
import GatehouseTestSupport
import Testing

@testable import GatehouseStore

/// The device-risk half of the store contract, against both stores.
@Suite struct DeviceRiskStoreTests {
    let box = try! SecretBox(masterKey: Array(repeating: 6, count: 32))
    let origin = ChangeOrigin(actor: Actor(kind: .cli, name: "test"), requestID: nil, sourceAddress: nil)
    let now = Date(millisecondsSince1970: 1_800_000_000_000)

    func seed(_ store: SQLStore) async throws -> (App, Device) {
        var generator = SystemRandomNumberGenerator()
        let app = try AppDraft(name: "Shop", platforms: ["ios"]).makeApp(at: now, using: &generator)
        let audit = origin.entry(at: now, action: "app.create", targetType: "app", targetID: "x", appID: app.id, before: nil, after: nil)
        try await store.apps.createApp(app, secrets: [], audit: audit)
        // The tokens below are minted for event 3301: registered, so that Core judges them fresh.
        try await store.apps.registerEvent(try RegisteredEvent.draft(app: app, eventID: 3301, name: "login", at: now), audit: audit)
        let report = DeviceReport(
            clientDeviceID: "client-1",
            mode: .noExtraData,
            basic: BasicDeviceData(model: "iPhone"),
            unique: UniqueDeviceData(idfv: "V"),
            extra: ExtraDeviceData(wifiSsid: "home"),
            environment: [.vpn]
        )
        let start = try DeviceStart.decide(report: report, app: app, address: "198.51.100.7", at: now, keys: ServerKeys(box: box))
        return (app, try await store.deviceRisk.upsertDevice(start.device))
    }

    /// A token as the device mints it, checked as a risk query checks it: its claims.
    func mint(app: App, device: Device, account: String = "u1", at time: Date? = nil, page: Bool = false) throws -> ZTokenClaims {
        var generator = SystemRandomNumberGenerator()
        let (event, accountID, keys) = (try EventID(validating: 3301), try AccountID(validating: account), ServerKeys(box: box))
        let token = ZToken.issue(
            app: app.id,
            device: device.id,
            epoch: UInt32(device.keyEpoch),
            event: event,
            account: accountID,
            ttlSeconds: 300,
            fromPage: page,
            at: time ?? now,
            keys: keys,
            using: &generator
        )
        let checked = ZToken.check(token, app: app.id, event: event, account: accountID, maxTTL: 300, at: time ?? now, keys: keys)
        guard checked.state == .fresh, let claims = checked.claims else { throw StoreError.corruptRow("a minted token does not check") }
        return claims
    }

    /// Consumes a freshly minted token: what a risk query that passes its checks does.
    func consume(_ store: SQLStore, app: App, device: Device, account: String = "u1", at time: Date? = nil) async throws -> RiskDecisionRecord {
        let queryKeys = try keys(app, try mint(app: app, device: device, account: account, at: time), account: account, at: time)
        return try await store.deviceRisk.recordRiskDecision(queryKeys).record
    }

    func keys(
        _ app: App,
        _ claims: ZTokenClaims?,
        account: String = "u1",
        address: String = "198.51.100.7",
        at time: Date? = nil
    ) throws
        -> RiskQuery
    {
        RiskQuery(
            appID: app.id,
            eventID: try EventID(validating: 3301),
            accountID: try AccountID(validating: account),
            clientAddress: IPAddress(address)!,
            tokenState: claims == nil ? .forged : .fresh,
            claims: claims,
            at: time ?? now.addingTimeInterval(1)
        )
    }

    @Test(arguments: TestStoreKind.available)
    func devicesKeepFirstSeenAndOnlyTheirLatestAllowedGroups(kind: TestStoreKind) async throws {
        try await withMigratedStore(kind) { (store, _) async throws in
            let (app, device) = try await seed(store)
            #expect(device.basic?.model == "iPhone" && device.unique?.idfv?.hasPrefix("hmac:") == true && device.extra == nil)
            var later = device
            later.lastSeen = now.addingTimeInterval(60)
            later.firstSeen = now.addingTimeInterval(60)
            later.basic = nil
            later.mode = [.noBasicData, .noExtraData]
            let stored = try await store.deviceRisk.upsertDevice(later)
            #expect(stored.firstSeen == now && stored.lastSeen == now.addingTimeInterval(60))
            #expect(stored.basic == nil && stored.mode.rawValue == 5)
            #expect(try await store.deviceRisk.device(appID: app.id, id: device.id) == stored)
        }
    }

    @Test(arguments: TestStoreKind.available)
    func aNonceIsUsableOnce(kind: TestStoreKind) async throws {
        try await withMigratedStore(kind) { (store, _) async throws in
            let (app, _) = try await seed(store)
            #expect(try await store.deviceRisk.useNonce(appID: app.id, nonce: "nonce-0000000001", expiresAt: now))
            #expect(try await store.deviceRisk.useNonce(appID: app.id, nonce: "nonce-0000000001", expiresAt: now) == false)
            #expect(try await store.deviceRisk.useNonce(appID: app.id, nonce: "nonce-0000000002", expiresAt: now))
        }
    }

    /// Nonces go to the database in group commits: under concurrency a batch may hold one nonce
    /// twice, and still exactly one use of each nonce is its first.
    @Test(arguments: TestStoreKind.available)
    func concurrentNoncesInGroupCommitsAreEachFirstOnce(kind: TestStoreKind) async throws {
        try await withMigratedStore(kind) { (store, _) async throws in
            let (app, _) = try await seed(store)
            let firsts = try await withThrowingTaskGroup(of: (String, Bool).self) { group in
                for use in 0..<300 {
                    let nonce = "nonce-batch-\(use % 60)"
                    group.addTask { (nonce, try await store.deviceRisk.useNonce(appID: app.id, nonce: nonce, expiresAt: now)) }
                }
                return try await group.reduce(into: [String: Int]()) { counts, answer in counts[answer.0, default: 0] += answer.1 ? 1 : 0 }
            }
            #expect(firsts.count == 60 && firsts.values.allSatisfy { $0 == 1 }, "\(firsts)")
            #expect(try await store.deviceRisk.useNonce(appID: app.id, nonce: "nonce-batch-7", expiresAt: now) == false)
            // One statement holding a nonce twice, and one already used: the first of each is first.
            let uses = ["nonce-twice-01", "nonce-twice-01", "nonce-batch-8", "nonce-twice-02"].map {
                NonceUse(appID: app.id, nonce: $0, expiresAt: now)
            }
            #expect(try await SQLDeviceRiskStore.insertNonces(uses, in: store.database) == [true, false, false, true])
        }
    }

    /// A bridge token's page is noted when it is minted and found when it is consumed; the note and
    /// the consumed id go once the token has expired (by the clock skew).
    @Test(arguments: TestStoreKind.available)
    func aBridgeTokensPageIsFoundByItsConsumption(kind: TestStoreKind) async throws {
        try await withMigratedStore(kind) { (store, _) async throws in
            let (app, device) = try await seed(store)
            let claims = try mint(app: app, device: device, page: true)
            try await store.deviceRisk.recordZTokenPage(
                appID: app.id,
                tokenID: claims.tokenID,
                pageURL: "https://shop.example/pay",
                expiresAt: claims.expiresAt
            )
            let queryKeys = try keys(app, claims)
            let first = try await store.deviceRisk.recordRiskDecision(queryKeys)
            #expect(first.facts.consumption == .consumed(pageURL: "https://shop.example/pay") && first.record.pageURL == "https://shop.example/pay")
            #expect(try await store.deviceRisk.recordRiskDecision(queryKeys).facts.consumption == .alreadyConsumed)
            let kept = try await store.retention.purgeExpired(at: claims.expiresAt.addingTimeInterval(ZToken.clockSkew - 1))
            #expect(kept?.ztokens == 0)
            let purged = try await store.retention.purgeExpired(at: claims.expiresAt.addingTimeInterval(ZToken.clockSkew + 1))
            if kind == .sqlite {
                #expect(purged?.ztokens == 2, "the consumed id and the page")
            } else {
                // The consumed id waits for its six-hour range to end, and goes with it.
                #expect(purged?.ztokens == 1, "the page")
                let later = try await store.retention.purgeExpired(at: claims.expiresAt.addingTimeInterval(ZToken.clockSkew + 6 * 3_600))
                #expect((later?.partitions.dropped ?? 0) >= 1)
            }
            #expect(try await store.database.query("SELECT token_id FROM consumed_ztokens").isEmpty)
        }
    }

    @Test(arguments: TestStoreKind.available)
    func sixtyFourConcurrentQueriesConsumeOneTokenExactlyOnce(kind: TestStoreKind) async throws {
        try await withMigratedStore(kind) { (store, _) async throws in
            let (app, device) = try await seed(store)
            let claims = try mint(app: app, device: device)
            let queryKeys = try keys(app, claims)
            let states = try await withThrowingTaskGroup(of: ZTokenState.self) { group in
                for _ in 0..<64 {
                    group.addTask { try await store.deviceRisk.recordRiskDecision(queryKeys).record.tokenState }
                }
                return try await group.reduce(into: [ZTokenState]()) { $0.append($1) }
            }
            #expect(states.filter { $0 == .fresh }.count == 1)
            #expect(states.filter { $0 == .replayed }.count == 63)
            let stored = try await store.deviceRisk.decisions(matching: DecisionFilter(appID: app.id), after: nil, limit: 200)
            #expect(stored.count == 64)
        }
    }

    /// One batch, as its group commit writes it: each token consumed once (its second query in the batch
    /// is replayed, as is a token consumed by an earlier batch), each count without the batch's own
    /// tokens. On PostgreSQL a batch judged by one set of thresholds is read and consumed in one
    /// statement, a batch judged by two in the reads and then the consumption: both are asked.
    @Test(arguments: TestStoreKind.available)
    func aBatchConsumesEachTokenOnceWhicheverStatementsReadIt(kind: TestStoreKind) async throws {
        try await withMigratedStore(kind) { (store, _) async throws in
            let (app, device) = try await seed(store)
            _ = try await consume(store, app: app, device: device, account: "before")
            let spent = try mint(app: app, device: device)
            _ = try await store.deviceRisk.recordRiskDecision(try keys(app, spent))
            let strict = RiskRules.effective(app: RiskRules(maxDeviceEventsPerMinute: 2, maxDeviceAccountsPerDay: 1), event: nil)
            for mixed in [false, true] {
                let (first, second) = (try mint(app: app, device: device), try mint(app: app, device: device))
                let batch = [
                    try pending(try keys(app, first)), try pending(try keys(app, second)), try pending(try keys(app, first)),
                    try pending(try keys(app, spent), rules: mixed ? strict : RiskRules.effective(app: nil, event: nil)),
                ]
                let recorded = try await SQLDeviceRiskStore.consumeAndDecide(
                    batch,
                    in: store.database,
                    writingBehind: store.deviceRisk.refusedDecisions
                )
                #expect(
                    recorded.map(\.facts.consumption) == [.consumed(pageURL: nil), .consumed(pageURL: nil), .alreadyConsumed, .alreadyConsumed],
                    "mixed thresholds: \(mixed)"
                )
                #expect(recorded.map(\.record.tokenID) == batch.map { Optional($0.tokenID) })
                // Consumed before this batch: one token by `consume`, one by the spent query, and two by the first round.
                let earlier = mixed ? 4 : 2
                #expect(recorded[0].facts.velocity?.deviceEventsLastMinute == earlier + 1, "mixed thresholds: \(mixed)")
                #expect(recorded[1].facts.velocity?.deviceEventsLastMinute == earlier + 1, "mixed thresholds: \(mixed)")
                let rows = try await store.database.query(
                    "SELECT count(*) AS n FROM consumed_ztokens WHERE app_id = \(app.id.rawValue) AND token_id IN (\(first.tokenID), \(second.tokenID))"
                )
                #expect(try rows.first?.int("n") == 2)
                let stored = try await store.database.query(
                    "SELECT count(*) AS n FROM risk_decisions WHERE app_id = \(app.id.rawValue) AND token_id = \(first.tokenID)"
                )
                #expect(try stored.first?.int("n") == 2)
            }
        }
    }

    @Test(arguments: TestStoreKind.available)
    func aQueryWithoutATokenNeverTouchesTheTokenTable(kind: TestStoreKind) async throws {
        try await withMigratedStore(kind) { (store, _) async throws in
            let (app, _) = try await seed(store)
            let before = store.deviceRisk.ztokenLookups
            let queryKeys = try keys(app, nil)
            let record = try await store.deviceRisk.recordRiskDecision(queryKeys).record
            #expect(record.tokenState == .forged)
            #expect(store.deviceRisk.ztokenLookups == before)
            #expect(try await store.deviceRisk.decision(appID: app.id, id: record.id) == record)
        }
    }

    /// Decisions without a token to consume are written behind their answers: every concurrent
    /// caller's row (each from an address of its own, so each is a sample) is stored, once; a list
    /// entry added meanwhile applies to the next query at once.
    @Test(arguments: TestStoreKind.available)
    func concurrentDecisionsWithoutATokenAreAllStored(kind: TestStoreKind) async throws {
        try await withMigratedStore(kind) { (store, _) async throws in
            let (app, _) = try await seed(store)
            let records = try await withThrowingTaskGroup(of: RiskDecisionRecord.self) { group in
                for number in 0..<200 {
                    let queryKeys = try keys(app, nil, account: "u\(number)", address: "198.51.\(number / 100).\(number % 100)")
                    group.addTask { try await store.deviceRisk.recordRiskDecision(queryKeys).record }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(Set(records.map(\.id)).count == 200)
            for record in records.prefix(20) { #expect(try await store.deviceRisk.decision(appID: app.id, id: record.id) == record) }
            let page = try await store.deviceRisk.decisions(matching: DecisionFilter(appID: app.id), after: nil, limit: 500)
            #expect(page.count == 200)

            let queryKeys = try keys(app, nil, account: "u7")
            #expect(try await store.deviceRisk.recordRiskDecision(queryKeys).facts.policy.listEntries.isEmpty)
            let entry = RiskListEntry(id: UUID(), appID: app.id, kind: .deny, subject: .account, value: "u7", note: nil, createdAt: now)
            try await store.deviceRisk.addListEntry(
                entry,
                audit: origin.entry(at: now, action: "list.add", targetType: "list", targetID: "x", appID: app.id, before: nil, after: nil)
            )
            #expect(try await store.deviceRisk.recordRiskDecision(queryKeys).facts.policy.listEntries == [entry])
        }
    }

    /// A query's read as its group commit makes it, alone or beside others.
    func pending(_ query: RiskQuery, rules: EffectiveRiskRules = RiskRules.effective(app: nil, event: nil)) throws -> PendingConsumption {
        PendingConsumption(query: query, tokenID: try #require(query.tokenID), claims: try #require(query.claims), policy: .none, rules: rules)
    }

    /// The farm count of the account's devices attested in the day, each device looked up by its key:
    /// those attested by hardware or by Play Integrity in the day count, one attested two days ago and
    /// one never attested do not, nor do the app's other attested devices.
    @Test(arguments: TestStoreKind.available)
    func theAccountsDevicesAttestedInTheDayAreCounted(kind: TestStoreKind) async throws {
        try await withMigratedStore(kind) { (store, _) async throws in
            let (app, device) = try await seed(store)
            let (hour, twoDays) = (now.addingTimeInterval(-3_600), now.addingTimeInterval(-172_800))
            let attested: [(String, Date?, Date?)] = [("hw", hour, nil), ("pi", nil, hour), ("old", twoDays, nil), ("none", nil, nil)]
            for (name, hardware, integrity) in attested {
                try await store.database.query(
                    """
                    INSERT INTO devices (app_id, device_id, client_device_id, collect_type, environment, first_seen, last_seen,
                      hardware_attested_at, integrity_at)
                    VALUES (\(app.id.rawValue), \("att-" + name), \(name), 0, 0, \(hour), \(hour), \(hardware), \(integrity))
                    """
                )
                try await store.database.query(
                    """
                    INSERT INTO velocity_edges (app_id, kind, subject, member, last_seen)
                    VALUES (\(app.id.rawValue), 2, 'u1', \("att-" + name), \(now.addingTimeInterval(-600)))
                    """
                )
            }
            for number in 0..<20 {
                try await store.database.query(
                    """
                    INSERT INTO devices (app_id, device_id, client_device_id, collect_type, environment, first_seen, last_seen, hardware_attested_at)
                    VALUES (\(app.id.rawValue), \("other-\(number)"), 'other', 0, 0, \(hour), \(hour), \(hour))
                    """
                )
            }
            let query = try keys(app, try mint(app: app, device: device, account: "u1"), account: "u1")
            let read = try #require(try await SQLDeviceRiskStore.readForConsumption([try pending(query)], in: store.database).first)
            #expect(read.velocity.attestations.accountLastDay == 2)
        }
    }

    @Test(arguments: TestStoreKind.available)
    func velocityCountsConsumedTokens(kind: TestStoreKind) async throws {
        try await withMigratedStore(kind) { (store, _) async throws in
            let (app, device) = try await seed(store)
            for account in ["a", "b", "c"] { _ = try await consume(store, app: app, device: device, account: account) }
            _ = try await consume(store, app: app, device: device, account: "old", at: now.addingTimeInterval(-90_000))
            let latest = try await consume(store, app: app, device: device, account: "a")
            #expect(latest.tokenState == .fresh)
            let queryKeys = try keys(app, try mint(app: app, device: device, account: "a"), account: "a")
            let rules = RiskRules.effective(app: nil, event: nil)
            let read = try #require(try await SQLDeviceRiskStore.readForConsumption([try pending(queryKeys)], in: store.database).first)
            #expect(read.device == device)
            // Four consumed in the last minute and this one; three accounts in the day with this one's
            // ("a", "b", "c"; not "old", 25 hours ago).
            #expect(read.velocity == Velocity(deviceEventsLastMinute: 5, deviceAccountsLastDay: 3, accountDevicesLastDay: 1, ipDevicesLastHour: 1))
            // Past a threshold each count stops at threshold + 1, however much more there is; in one
            // read, each query at its own rules' threshold.
            for number in 0..<12 { _ = try await consume(store, app: app, device: device, account: "more-\(number)") }
            let strict = RiskRules.effective(app: RiskRules(maxDeviceEventsPerMinute: 2, maxDeviceAccountsPerDay: 1), event: nil)
            let other = try keys(app, try mint(app: app, device: device, account: "a"), account: "a")
            let reads = try await SQLDeviceRiskStore.readForConsumption(
                [try pending(queryKeys), try pending(other, rules: strict)],
                in: store.database
            )
            #expect(
                reads.map(\.velocity) == [
                    Velocity(
                        deviceEventsLastMinute: rules.maxDeviceEventsPerMinute + 1,
                        deviceAccountsLastDay: rules.maxDeviceAccountsPerDay + 1,
                        accountDevicesLastDay: 1,
                        ipDevicesLastHour: 1
                    ),
                    Velocity(deviceEventsLastMinute: 3, deviceAccountsLastDay: 2, accountDevicesLastDay: 1, ipDevicesLastHour: 1),
                ]
            )
        }
    }

    /// A velocity pair seen again within a minute is not written again: the read says it is fresh, and
    /// its time stays. Past the minute, or for a new pair, the consumption writes it.
    @Test(arguments: TestStoreKind.available)
    func freshVelocityPairsAreNotRewritten(kind: TestStoreKind) async throws {
        try await withMigratedStore(kind) { (store, _) async throws in
            let (app, device) = try await seed(store)
            func seen(_ kind: Int, _ subject: String, _ member: String) async throws -> Date? {
                try await store.database.query(
                    """
                    SELECT last_seen FROM velocity_edges WHERE app_id = \(app.id.rawValue) AND kind = \(kind) AND subject = \(subject)
                    AND member = \(member)
                    """
                ).first?.date("last_seen")
            }
            let first = now.addingTimeInterval(1)
            _ = try await consume(store, app: app, device: device, account: "a", at: first)
            #expect(try await seen(2, "a", device.id.rawValue) == first)
            let soon = first.addingTimeInterval(SQLDeviceRiskStore.velocityPairRewriteAfter - 1)
            let again = try keys(app, try mint(app: app, device: device, account: "a", at: soon), account: "a", at: soon)
            let read = try #require(try await SQLDeviceRiskStore.readForConsumption([try pending(again)], in: store.database).first)
            #expect(read.freshPairs == Set(VelocityEdge.pairs(of: try pending(again))))
            #expect(try await store.deviceRisk.recordRiskDecision(again).record.tokenState == .fresh)
            #expect(try await seen(1, device.id.rawValue, "a") == first)
            #expect(try await seen(2, "a", device.id.rawValue) == first)
            #expect(try await seen(3, "198.51.100.7", device.id.rawValue) == first)
            // Another address: that pair is new and written, the account's are still fresh.
            let elsewhere = try keys(app, try mint(app: app, device: device, account: "a", at: soon), account: "a", address: "198.51.100.8", at: soon)
            _ = try await store.deviceRisk.recordRiskDecision(elsewhere)
            #expect(try await seen(3, "198.51.100.8", device.id.rawValue) == soon)
            #expect(try await seen(2, "a", device.id.rawValue) == first)
            // Past the minute the pairs are written again.
            let later = first.addingTimeInterval(SQLDeviceRiskStore.velocityPairRewriteAfter + 1)
            _ = try await consume(store, app: app, device: device, account: "a", at: later)
            #expect(try await seen(1, device.id.rawValue, "a") == later)
            #expect(try await seen(2, "a", device.id.rawValue) == later)
            #expect(try await seen(3, "198.51.100.7", device.id.rawValue) == later)
        }
    }

    /// The velocity read walks its indexes however the rows lie: with an attack's pairs for one address
    /// stored before its pairs for one account, PostgreSQL's planner, expecting the account's rows
    /// spread evenly, scanned the table for the account's count, past every row of the address's
    /// (12 ms at 100,000 rows, growing with them). The read is planned per batch, for one query or many.
    @Test func theVelocityReadUsesItsIndexesWhateverTheHistory() async throws {
        guard TestStoreKind.available.contains(.postgres) else { return }
        try await withMigratedStore(.postgres) { (store, _) async throws in
            let (app, device) = try await seed(store)
            // Inside every window: seconds before the query.
            let seen = now.addingTimeInterval(-30)
            try await store.database.query(
                """
                INSERT INTO velocity_edges (app_id, kind, subject, member, last_seen)
                SELECT \(app.id.rawValue), 3, '203.0.113.66', 'attack-' || t, \(seen) FROM generate_series(1, 60000) t
                """
            )
            try await store.database.query(
                """
                INSERT INTO velocity_edges (app_id, kind, subject, member, last_seen)
                SELECT \(app.id.rawValue), 2, 'u1', 'attack-' || t, \(seen) FROM generate_series(1, 30000) t
                """
            )
            // An app of many devices, the account's among them: a lookup by app alone walks them all.
            try await store.database.query(
                """
                INSERT INTO devices (app_id, device_id, client_device_id, collect_type, environment, first_seen, last_seen)
                SELECT \(app.id.rawValue), 'attack-' || t, 'attack-' || t, 0, 0, \(seen), \(seen) FROM generate_series(1, 2000) t
                """
            )
            // Devices not analysed yet, as a busy table is between autovacuum's runs: the plan the bench's
            // history step was given then probed the devices by app alone.
            try await store.database.query("ANALYZE velocity_edges")
            for size in [1, 3, 40] {
                let batch = try (0..<size).map { number in
                    try pending(try keys(app, try mint(app: app, device: device), account: "u\(number % 2 + 1)"))
                }
                for pages in [false, true] {
                    let statement = SQLDeviceRiskStore.consumptionReadStatement(batch, dialect: .postgres, pages: pages)
                    let custom = try await store.database.query("EXPLAIN \(statement)")
                    // The statement is prepared: after a few runs PostgreSQL may keep one generic plan, made
                    // without the parameters' values. That plan must walk the indexes too.
                    let generic = try await store.database.transaction { transaction in
                        try await transaction.query("SET LOCAL plan_cache_mode = force_generic_plan")
                        try await transaction.query(
                            SQL(
                                unbound: "PREPARE read_plan_test (\(statement.binds.map(Self.typeName).joined(separator: ", "))) AS \(statement.text)"
                            )
                        )
                        let literals = statement.binds.map(Self.literal).joined(separator: ", ")
                        let plan = try await transaction.query(SQL(unbound: "EXPLAIN EXECUTE read_plan_test (\(literals))"))
                        try await transaction.query("DEALLOCATE read_plan_test")
                        return plan
                    }
                    for rows in [custom, generic] {
                        let plan = try rows.map { try $0.text("QUERY PLAN") }.joined(separator: "\n")
                        #expect(
                            !plan.contains("Seq Scan on velocity_edges") && !plan.contains("Seq Scan on consumed_ztokens")
                                && !plan.contains("Seq Scan on attestation_edges") && !plan.contains("Seq Scan on attested"),
                            "\(plan)"
                        )
                        // Three velocity counts, the account's devices for the farm count and the query's three own
                        // pairs, each on its subject's index.
                        #expect(plan.components(separatedBy: "using velocity_edges_recent").count == 8, "\(plan)")
                        #expect(plan.components(separatedBy: "using attestation_edges_recent").count == 3, "the farm's counts: \(plan)")
                        // Each of the account's devices found by its key, app and device both.
                        let lookups = plan.components(separatedBy: "on devices attested").dropFirst()
                        #expect(lookups.count == 1, "\(plan)")
                        for lookup in lookups {
                            let condition = lookup.split(separator: "\n").dropFirst().first ?? ""
                            #expect(condition.contains("Index Cond") && condition.contains("device_id ="), "\(plan)")
                        }
                    }
                }
            }
        }
    }

    /// A bound value's type, for `PREPARE`.
    static func typeName(_ value: SQLValue) -> String {
        switch value {
        case .text, .null: "text"
        case .uuid: "uuid"
        case .int: "bigint"
        case .date: "timestamptz"
        case .bytes: "bytea"
        case .texts, .optionalTexts: "text[]"
        case .optionalBytes: "bytea[]"
        case .uuids: "uuid[]"
        case .ints: "bigint[]"
        case .dates: "timestamptz[]"
        }
    }

    /// A bound value as a literal, for `EXECUTE` (which takes no bound parameters): test values, no quotes in them.
    static func literal(_ value: SQLValue) -> String {
        func quoted(_ texts: [String]) -> String { "'{" + texts.map { "\"\($0)\"" }.joined(separator: ",") + "}'" }
        switch value {
        case .text(let text): return "'\(text)'"
        case .uuid(let uuid): return "'\(uuid)'"
        case .int(let int): return "\(int)"
        case .date(let date): return "'\(date.formatted(.iso8601))'"
        case .bytes, .null: return "NULL"
        case .texts(let texts): return quoted(texts)
        case .optionalTexts(let texts): return "'{" + texts.map { $0.map { "\"\($0)\"" } ?? "NULL" }.joined(separator: ",") + "}'"
        case .optionalBytes: return "NULL"
        case .uuids(let uuids): return quoted(uuids.map(\.uuidString))
        case .ints(let ints): return quoted(ints.map(String.init))
        case .dates(let dates): return quoted(dates.map { $0.formatted(.iso8601) })
        }
    }

    @Test(arguments: TestStoreKind.available)
    func listsRulesAndSettingsAreAuditedChanges(kind: TestStoreKind) async throws {
        try await withMigratedStore(kind) { (store, _) async throws in
            let (app, _) = try await seed(store)
            let audit = origin.entry(at: now, action: "test", targetType: "t", targetID: "x", appID: app.id, before: nil, after: nil)
            let entry = try RiskListEntry.draft(app: app, kind: "deny", subject: "cidr", value: "10.1.2.3/8", note: "office", at: now)
            #expect(entry.value == "10.1.2.3/8")
            try await store.deviceRisk.addListEntry(entry, audit: audit)
            await #expect(throws: StoreError.self) { try await store.deviceRisk.addListEntry(entry, audit: audit) }
            #expect(try await store.deviceRisk.listEntries(appID: app.id) == [entry])
            try await store.deviceRisk.removeListEntry(appID: app.id, id: entry.id, audit: audit)
            await #expect(throws: StoreError.notFound("no list entry \(entry.id)")) {
                try await store.deviceRisk.removeListEntry(appID: app.id, id: entry.id, audit: audit)
            }
            let rules = RiskRules(reviewAt: 30, weights: ["device.vpn": 25])
            try await store.deviceRisk.setRiskRules(appID: app.id, scope: 0, rules: rules, at: now, audit: audit)
            try await store.deviceRisk.setRiskRules(appID: app.id, scope: 3301, rules: RiskRules(rejectAt: 50), at: now, audit: audit)
            #expect(try await store.deviceRisk.riskRules(appID: app.id) == [0: rules, 3301: RiskRules(rejectAt: 50)])
            var updated = app
            updated.settings = AppSettings(ztokenTTLSeconds: 60, retentionDays: 7)
            try await store.deviceRisk.updateSettings(of: app, to: updated, audit: audit)
            #expect(try await store.apps.app(withKey: app.appKey)?.settings == updated.settings)
            // add, remove, two rule changes, settings: five audited changes after the app's creation and
            // its event's registration (`seed`).
            #expect(try await store.admin.auditRecords(matching: AuditFilter(appID: app.id), before: nil, limit: 50).count == 7)
        }
    }

    @Test(arguments: TestStoreKind.available)
    func decisionsFilterAndPageNewestFirst(kind: TestStoreKind) async throws {
        try await withMigratedStore(kind) { (store, _) async throws in
            let (app, _) = try await seed(store)
            for second in 0..<5 {
                let queryKeys = try keys(app, nil, account: second.isMultiple(of: 2) ? "even" : "odd", at: now.addingTimeInterval(Double(second)))
                _ = try await store.deviceRisk.recordRiskDecision(queryKeys)
            }
            let first = try await store.deviceRisk.decisions(matching: DecisionFilter(appID: app.id), after: nil, limit: 2).map(\.record)
            #expect(try await store.deviceRisk.decisions(matching: DecisionFilter(appID: app.id), after: nil, limit: 1).first?.appKey == app.appKey)
            let last = first.last!
            let rest = try await store.deviceRisk.decisions(
                matching: DecisionFilter(appID: app.id),
                after: DecisionCursor(decidedAt: last.decidedAt, id: last.id),
                limit: 10
            ).map(\.record)
            let times = (first + rest).map(\.decidedAt)
            #expect(times.count == 5 && times == times.sorted(by: >))
            let even = try await store.deviceRisk.decisions(
                matching: DecisionFilter(accountID: try AccountID(validating: "even")),
                after: nil,
                limit: 10
            )
            #expect(even.count == 3)
            let window = try await store.deviceRisk.decisions(
                matching: DecisionFilter(appID: app.id, from: now.addingTimeInterval(1), to: now.addingTimeInterval(3)),
                after: nil,
                limit: 10
            )
            #expect(window.count == 2)
            #expect(try await store.deviceRisk.decisions(matching: DecisionFilter(decision: .pass), after: nil, limit: 10).isEmpty)
        }
    }

    @Test(arguments: TestStoreKind.available)
    func thePurgeRemovesWhatIsPastRetention(kind: TestStoreKind) async throws {
        try await withMigratedStore(kind) { (store, _) async throws in
            let (app, device) = try await seed(store)
            _ = try await consume(store, app: app, device: device, at: now.addingTimeInterval(-31 * 86_400))
            let recent = try mint(app: app, device: device)
            #expect(try await store.deviceRisk.useNonce(appID: app.id, nonce: "nonce-expired-0001", expiresAt: now.addingTimeInterval(-1)))
            let oldKeys = try keys(app, nil, at: now.addingTimeInterval(-40 * 86_400))
            _ = try await store.deviceRisk.recordRiskDecision(oldKeys)
            // A refused token's decision is written behind its answer.
            await store.deviceRisk.catchUpWritesBehind()
            var report = try await store.retention.purgeExpired(at: now)
            // The old consumption's velocity pairs go too (last seen over 25 hours ago).
            #expect(report?.velocityEdges == 3)
            report?.velocityEdges = 0
            report?.partitions = PartitionReport()
            // On PostgreSQL the expired nonce went into its six-hour range, which is dropped once it ends.
            #expect(report == PurgeReport(ztokens: 1, decisions: 2, nonces: kind == .sqlite ? 1 : 0, attestations: 0, captchas: 0))
            let recentKeys = try keys(app, recent)
            #expect(try await store.deviceRisk.recordRiskDecision(recentKeys).record.tokenState == .fresh)
            if kind == .postgres { _ = try await store.retention.purgeExpired(at: now.addingTimeInterval(6 * 3_600)) }
            #expect(try await store.deviceRisk.useNonce(appID: app.id, nonce: "nonce-expired-0001", expiresAt: now.addingTimeInterval(-1)), "gone")
        }
    }

    /// On PostgreSQL a day of decisions goes whole once every app may lose it; an app that keeps its
    /// decisions fewer days loses its own by rows before that.
    @Test func aDayOfDecisionsGoesWholeOnPostgreSQL() async throws {
        guard TestStoreKind.available.contains(.postgres) else { return }
        try await withMigratedStore(.postgres) { (store, _) async throws in
            let (app, _) = try await seed(store)
            var generator = SystemRandomNumberGenerator()
            var brief = try AppDraft(name: "Brief", platforms: ["ios"]).makeApp(at: now, using: &generator)
            brief.settings = AppSettings(ztokenTTLSeconds: 300, retentionDays: 7)
            let audit = origin.entry(at: now, action: "app.create", targetType: "app", targetID: "x", appID: brief.id, before: nil, after: nil)
            try await store.apps.createApp(brief, secrets: [], audit: audit)
            #expect((try await store.retention.keepPartitions(at: now)?.created ?? 0) > 0)
            for owner in [app, brief] {
                for second in 0..<3 {
                    let queryKeys = try keys(owner, nil, at: now.addingTimeInterval(Double(second)))
                    _ = try await store.deviceRisk.recordRiskDecision(queryKeys)
                }
            }
            await store.deviceRisk.catchUpWritesBehind()
            let day = PartitionedTable.decisions.rangeName(start: PartitionedTable.floor(PartitionedTable.seconds(now), to: 86_400))
            func dayExists() async throws -> Bool {
                try await !store.database.query("SELECT 1 AS present FROM pg_class WHERE relname = \(.text(day))").isEmpty
            }
            #expect(try await store.database.query("SELECT decision_id FROM risk_decisions_default").isEmpty, "each in its day")
            let week = try await store.retention.purgeExpired(at: now.addingTimeInterval(8 * 86_400))
            let keptAWeek = try await dayExists()
            #expect(week?.decisions == 3 && keptAWeek, "the brief app's by rows, the day kept for the other")
            let month = try await store.retention.purgeExpired(at: now.addingTimeInterval(31 * 86_400))
            let keptAMonth = try await dayExists()
            #expect(month?.decisions == 0 && !keptAMonth, "the day dropped whole")
            #expect(try await store.database.query("SELECT decision_id FROM risk_decisions").isEmpty)
        }
    }

    /// Rows that reached the default partition (no range yet for their time) move into their range
    /// when it is made, and no read made meanwhile misses one: a read planned before the attach and
    /// run after it would look in the default partition only.
    @Test func readsFindEveryRowWhileItsRangeIsMade() async throws {
        guard TestStoreKind.available.contains(.postgres) else { return }
        try await withMigratedStore(.postgres) { (store, _) async throws in
            let (app, _) = try await seed(store)
            let rows = 200
            try await store.database.query(
                """
                INSERT INTO consumed_ztokens (app_id, token_id, device_id, consumed_at, expires_at)
                SELECT \(.uuid(app.id.rawValue)), 'stray-' || t, 'device', \(.date(now)), \(.date(now.addingTimeInterval(60))) FROM generate_series(1, \(rows)) t
                """
            )
            let misses = try await withThrowingTaskGroup(of: Int.self) { group in
                group.addTask {
                    _ = try await store.retention.keepPartitions(at: now)
                    return 0
                }
                for reader in 0..<8 {
                    group.addTask {
                        var missed = 0
                        for round in 0..<150 {
                            let found = try await store.database.query(
                                "SELECT token_id FROM consumed_ztokens WHERE app_id = \(.uuid(app.id.rawValue)) AND token_id = \(.text("stray-\((reader * 150 + round) % rows + 1)"))"
                            )
                            missed += found.isEmpty ? 1 : 0
                        }
                        return missed
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(misses == 0)
            #expect(try await store.database.query("SELECT token_id FROM consumed_ztokens_default").isEmpty, "moved into their range")
            #expect(try await store.database.query("SELECT token_id FROM consumed_ztokens").count == rows)
        }
    }

    @Test func onlyOneInstancePurgesAtATimeOnPostgreSQL() async throws {
        guard TestStoreKind.available.contains(.postgres) else { return }
        try await withMigratedStore(.postgres) { (first, database) async throws in
            try await StoreService.withStore(database.location, logger: TestDatabase.logger) { (second) async throws in
                // While one instance holds the purge lock, another skips its round.
                let skipped = try await first.database.ifUnlocked(SQLRetention.purgeLockKey) { _ in
                    try await second.retention.purgeExpired(at: now)
                }
                #expect(skipped == .some(nil))
                var report = try await second.retention.purgeExpired(at: now)
                #expect(report?.partitions.created ?? 0 > 0, "the ranges around the test's clock")
                report?.partitions = PartitionReport()
                #expect(report == PurgeReport())
            }
        }
    }
}
