import Crypto
import Foundation
import GatehouseSigning
import Testing

@testable import GatehouseCore

@Suite struct ZTokenTests {
    let keys = ServerKeys(box: try! SecretBox(masterKey: Array(repeating: 9, count: 32)))
    let app = AppID(UUID())
    let device = DeviceID(bytes: Array(0..<16))
    let event = try! EventID(validating: 3348)
    let account = try! AccountID(validating: "10538532")
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    /// Minted as the device does: with the key and context device start hands it.
    func mint(ttl: UInt16 = 300, epoch: UInt32 = 3, at issued: Date? = nil, account: String? = nil) -> String {
        let grant = ZToken.deviceKey(app: app, device: device, epoch: epoch, keys: keys)
        return ZTokenFormat.mint(
            tokenID: Array(repeating: 7, count: 12),
            issuedAt: UInt32((issued ?? now).timeIntervalSince1970),
            ttlSeconds: ttl,
            event: event.rawValue,
            account: account ?? self.account.rawValue,
            context: grant.context,
            key: grant.key
        )
    }

    func check(
        _ token: String,
        app: AppID? = nil,
        event: EventID? = nil,
        account: AccountID? = nil,
        maxTTL: Int = 300,
        at: Date? = nil
    )
        -> (state: ZTokenState, claims: ZTokenClaims?)
    {
        ZToken.check(
            token,
            app: app ?? self.app,
            event: event ?? self.event,
            account: account ?? self.account,
            maxTTL: maxTTL,
            at: at ?? now,
            keys: keys
        )
    }

    @Test func tokensAreShortURLSafeBase64AndCarryTheirClaims() {
        let token = mint()
        #expect(token.count == 91 && token.count < ZToken.maxTextLength)
        #expect(Base64URL.decode(token)?.count == ZTokenFormat.byteCount)
        #expect(!token.contains("=") && !token.contains("+") && !token.contains("/"))
        let checked = check(token)
        #expect(checked.state == .fresh)
        #expect(checked.claims?.deviceID == device && checked.claims?.eventID == event && checked.claims?.keyEpoch == 3)
        #expect(checked.claims?.tokenID == Base64URL.encode(Array(repeating: UInt8(7), count: 12)) && checked.claims?.fromPage == false)
    }

    /// The vector of docs/sdk-protocol.md, which scripts/ztoken_mint.py (Python's hmac) also prints.
    @Test func theFormatMatchesTheDocumentedVector() {
        let token = ZTokenFormat.mint(
            tokenID: Array(repeating: 7, count: 12),
            issuedAt: 1_800_000_000,
            ttlSeconds: 300,
            event: 3348,
            account: "10538532",
            context: Array(100..<124),
            key: SymmetricKey(data: Array(1...32) as [UInt8])
        )
        #expect(token == "AgcHBwcHBwcHBwcHB2tJ0gABLDC6cWzXl1EMRGRlZmdoaWprbG1ub3BxcnN0dXZ3eHl6e4HB_oFshXvbHRvc6WmFcZQ")
    }

    @Test func theServerMintsTheSameFormat() {
        var generator = SystemRandomNumberGenerator()
        let token = ZToken.issue(
            app: app,
            device: device,
            epoch: 3,
            event: event,
            account: account,
            ttlSeconds: 300,
            fromPage: true,
            at: now,
            keys: keys,
            using: &generator
        )
        let checked = check(token)
        #expect(checked.state == .fresh && checked.claims?.fromPage == true)
    }

    @Test func bindingsAreCheckedWithoutAnyLookup() throws {
        let token = mint()
        #expect(check(token, app: AppID(UUID())).state == .wrongApp)
        #expect(check(token, app: AppID(UUID())).claims == nil, "a token for another app names nothing this app trusts")
        #expect(check(token, event: try EventID(validating: 3300)).state == .wrongEvent)
        #expect(check(token, account: try AccountID(validating: "other")).state == .wrongAccount)
        #expect(check(token, at: now.addingTimeInterval(300)).state == .expired)
        #expect(check(token, at: now.addingTimeInterval(299)).state == .fresh)
    }

    @Test func theDeviceCannotOutliveTheAppsLifetimeNorMintAheadOfTheClock() {
        let long = mint(ttl: 3600)
        #expect(check(long, maxTTL: 300, at: now.addingTimeInterval(299)).state == .fresh)
        #expect(check(long, maxTTL: 300, at: now.addingTimeInterval(300)).state == .expired, "cut to the app's 300 s")
        #expect(check(long, maxTTL: 300).claims?.ttlSeconds == 300)
        #expect(check(long, maxTTL: 300).claims?.consumptionKeptUntil == now.addingTimeInterval(3600), "remembered as long as it could live")
        #expect(check(mint(at: now.addingTimeInterval(ZToken.clockSkew))).state == .fresh, "within the skew")
        #expect(check(mint(at: now.addingTimeInterval(ZToken.clockSkew + 1))).state == .expired, "from too far ahead")
    }

    @Test func forgedAlteredTruncatedAndForeignTokensAreForged() {
        let token = mint()
        let otherKeys = ServerKeys(box: try! SecretBox(masterKey: Array(repeating: 1, count: 32)))
        let foreignGrant = ZToken.deviceKey(app: app, device: device, epoch: 3, keys: otherKeys)
        let ownContext = ZToken.deviceKey(app: app, device: device, epoch: 3, keys: keys).context
        // Another installation's key with this app's context: the app tag matches, the MAC does not.
        let foreign = ZTokenFormat.mint(
            tokenID: Array(repeating: 1, count: 12),
            issuedAt: UInt32(now.timeIntervalSince1970),
            ttlSeconds: 300,
            event: event.rawValue,
            account: account.rawValue,
            context: ownContext,
            key: foreignGrant.key
        )
        var candidates = [
            String(token.dropLast(4)), String(repeating: "A", count: 200), "not base64 at all!", "", foreign, token + "AAAA",
        ]
        // Every byte but the app tag's, altered: the MAC covers them all (another epoch or device included).
        let bytes = Base64URL.decode(token)!
        for index in bytes.indices where !(28..<32).contains(index) {
            var altered = bytes
            altered[index] ^= 0x01
            candidates.append(Base64URL.encode(altered))
        }
        for candidate in candidates {
            let checked = check(candidate)
            #expect(checked.state == .forged, "\(candidate)")
            #expect(checked.claims == nil)
        }
        #expect(keys.provenDeviceKeys.count == 0, "no forged token keeps a key")
        // With the device's key kept, after one valid token, the same tokens are still forged.
        #expect(check(token).state == .fresh && keys.provenDeviceKeys.count == 1)
        for candidate in candidates { #expect(check(candidate).state == .forged, "\(candidate)") }
        #expect(keys.provenDeviceKeys.count == 1)
    }

    @Test func aKeptDeviceKeyJudgesAsTheDerivedOneDoes() {
        let token = mint()
        let other = try! AccountID(validating: "other")
        let derived = [check(token).state, check(token, account: other).state, check(mint(epoch: 4)).state]
        #expect(derived == [.fresh, .wrongAccount, .fresh])
        #expect(keys.provenDeviceKeys.count == 2, "epochs 3 and 4")
        let kept = [check(token).state, check(token, account: other).state, check(mint(epoch: 4)).state]
        #expect(kept == derived)
        // Another app's check of the same device and epoch finds no key of this app's.
        #expect(check(token, app: AppID(UUID())).state == .wrongApp)
    }

    @Test func keptDeviceKeysAreBounded() {
        let kept = ProvenDeviceKeys()
        let key = HMAC<SHA256>(key: SymmetricKey(size: .bits256))
        for number in 0..<(ProvenDeviceKeys.bound + 10) {
            kept.remember(
                key,
                for: .init(app: app, device: withUnsafeBytes(of: UInt64(number)) { Array($0) + Array(repeating: 0, count: 8) }, epoch: 1)
            )
        }
        #expect(kept.count <= ProvenDeviceKeys.bound && kept.count > 0)
    }
}

@Suite struct DeviceStartTests {
    let keys = ServerKeys(box: try! SecretBox(masterKey: Array(repeating: 4, count: 32)))
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    func app() throws -> App {
        var generator = SystemRandomNumberGenerator()
        return try AppDraft(name: "Shop", platforms: ["ios"]).makeApp(at: now, using: &generator)
    }

    func report(_ mode: CollectionMode, clientID: String = "device-1", idfv: String = "IDFV-1") -> DeviceReport {
        DeviceReport(
            clientDeviceID: clientID,
            mode: mode,
            platform: .ios,
            sdkVersion: "1.0",
            basic: BasicDeviceData(model: "iPhone15,2", osVersion: "17.1", screen: "1179x2556"),
            unique: UniqueDeviceData(idfv: idfv, idfa: "IDFA-1"),
            extra: ExtraDeviceData(wifiSsid: "home", wifiBssid: "aa:bb"),
            environment: [.jailbreak, .proxy]
        )
    }

    @Test(arguments: [0, 1, 2, 3, 4, 5, 6, 7])
    func onlyAllowedGroupsAreKeptAndTheRestReported(raw: Int) throws {
        let mode = try CollectionMode(validating: raw)
        let start = try DeviceStart.decide(report: report(mode), app: try app(), address: "203.0.113.5", at: now, keys: keys)
        #expect((start.device.basic != nil) == mode.allows(.basic))
        #expect((start.device.unique != nil) == mode.allows(.unique))
        #expect((start.device.extra != nil) == mode.allows(.extra))
        #expect(Set(start.dropped) == Set(DeviceDataGroup.allCases.filter { !mode.allows($0) }))
        #expect(start.device.environment == [.jailbreak, .proxy])
    }

    @Test func identifiersAreKeptOnlyAsKeyedDigestsAndTheIDFANever() throws {
        let app = try app()
        let started = try DeviceStart.decide(report: report(.fullCollection), app: app, address: nil, at: now, keys: keys)
        #expect(started.device.unique?.idfa == nil)
        let idfv = try #require(started.device.unique?.idfv)
        #expect(idfv.hasPrefix("hmac:") && idfv.count == 37 && !idfv.contains("IDFV"))
        let again = try DeviceStart.decide(report: report(.fullCollection, clientID: "other"), app: app, address: nil, at: now, keys: keys)
        #expect(again.device.unique?.idfv == idfv)
    }

    @Test func theIDFVKeepsTheIdentityAcrossClientIDsWhenAllowed() throws {
        let app = try app()
        let first = try DeviceStart.decide(report: report(.fullCollection, clientID: "a"), app: app, address: nil, at: now, keys: keys)
        let reinstall = try DeviceStart.decide(report: report(.fullCollection, clientID: "b"), app: app, address: nil, at: now, keys: keys)
        #expect(first.device.id == reinstall.device.id)
        // Same identity, but each start is a new key epoch: the signing key rotates.
        var restarted = first.device
        restarted.keyEpoch += 1
        #expect(DeviceStart.deviceKey(for: first.device, keys: keys) != DeviceStart.deviceKey(for: restarted, keys: keys))
        #expect(DeviceStart.deviceKey(for: first.device, keys: keys) == DeviceStart.deviceKey(for: reinstall.device, keys: keys))
        // Without unique data the client's device id is the identity.
        let privateA = try DeviceStart.decide(report: report(.notGranted, clientID: "a"), app: app, address: nil, at: now, keys: keys)
        let privateA2 = try DeviceStart.decide(report: report(.notGranted, clientID: "a", idfv: "other"), app: app, address: nil, at: now, keys: keys)
        let privateB = try DeviceStart.decide(report: report(.notGranted, clientID: "b"), app: app, address: nil, at: now, keys: keys)
        #expect(privateA.device.id == privateA2.device.id)
        #expect(privateA.device.id != privateB.device.id)
        #expect(privateA.device.id != first.device.id)
    }

    @Test func badReportsAreRefused() throws {
        let app = try app()
        var long = report(.fullCollection)
        long.basic?.model = String(repeating: "x", count: 257)
        #expect(throws: DomainError.self) { try DeviceStart.decide(report: long, app: app, address: nil, at: now, keys: keys) }
        #expect(throws: DomainError.self) {
            try DeviceStart.decide(report: report(.fullCollection, clientID: ""), app: app, address: nil, at: now, keys: keys)
        }
        #expect(throws: DomainError.self) { try CollectionMode(validating: 8) }
        var disabled = app
        disabled.status = .disabled
        #expect(throws: DomainError.self) {
            try DeviceStart.decide(report: report(.fullCollection), app: disabled, address: nil, at: now, keys: keys)
        }
    }
}

@Suite struct RiskEngineTests {
    let rules = RiskRules.effective(app: nil, event: nil)
    let device = Device(
        appID: AppID(UUID()),
        id: DeviceID(bytes: Array(repeating: 1, count: 16)),
        clientDeviceID: "d",
        mode: [],
        platform: .ios,
        sdkVersion: nil,
        basic: nil,
        unique: nil,
        extra: nil,
        environment: [],
        firstSeen: Date(),
        lastSeen: Date(),
        lastAddress: nil
    )
    let quiet = Velocity(deviceEventsLastMinute: 1, deviceAccountsLastDay: 1, accountDevicesLastDay: 1, ipDevicesLastHour: 1)

    func inputs(_ state: ZTokenState = .fresh, device: Device? = nil, velocity: Velocity? = nil, lists: [RiskListEntry] = []) -> RiskInputs {
        RiskInputs(
            tokenState: state,
            device: device ?? self.device,
            velocity: velocity ?? quiet,
            startedFrom: "198.51.100.1",
            clientAddress: "198.51.100.1",
            listHits: lists
        )
    }

    @Test func aCleanFreshTokenPasses() {
        #expect(RiskEngine.judge(inputs(), rules: rules) == RiskVerdict(decision: .pass, score: 0, tags: []))
    }

    @Test(arguments: [ZTokenState.replayed, .expired, .forged, .wrongApp, .wrongEvent, .wrongAccount])
    func everyBadTokenRejects(state: ZTokenState) {
        let verdict = RiskEngine.judge(inputs(state), rules: rules)
        #expect(verdict.decision == .reject && verdict.score == 100)
        #expect(verdict.tags.contains { $0.tag.hasPrefix("token.") })
        // Reasons are sentences an operator reads, not an enum's raw value.
        let reason = verdict.tags.first { $0.tag.hasPrefix("token.") }?.reason ?? ""
        #expect(reason.hasPrefix("The ztoken ") && !reason.contains("wrong") && reason.hasSuffix("."))
    }

    @Test func signalsAndVelocityAddUpToReviewThenReject() {
        var risky = device
        risky.environment = [.jailbreak]
        let review = RiskEngine.judge(inputs(device: risky), rules: rules)
        #expect(review.decision == .review && review.score == 40 && review.tags.map(\.tag) == ["device.jailbreak"])
        let busy = Velocity(deviceEventsLastMinute: 11, deviceAccountsLastDay: 4, accountDevicesLastDay: 1, ipDevicesLastHour: 1)
        let reject = RiskEngine.judge(inputs(device: risky, velocity: busy), rules: rules)
        #expect(reject.decision == .reject && reject.score == 100)
        #expect(reject.tags.map(\.tag) == ["device.jailbreak", "velocity.device_accounts_per_day", "velocity.device_events_per_minute"])
        #expect(reject.tags[2].reason == "More than 10 events from this device in the last minute (limit 10).")
    }

    @Test func listsDecideOnTheirOwn() {
        let deny = RiskListEntry(id: UUID(), appID: device.appID, kind: .deny, subject: .account, value: "u", note: nil, createdAt: Date())
        let allow = RiskListEntry(id: UUID(), appID: device.appID, kind: .allow, subject: .account, value: "u", note: nil, createdAt: Date())
        var risky = device
        risky.environment = [.hooking, .jailbreak]
        #expect(RiskEngine.judge(inputs(lists: [deny]), rules: rules).decision == .reject)
        #expect(RiskEngine.judge(inputs(device: risky, lists: [allow]), rules: rules).decision == .pass)
        #expect(RiskEngine.judge(inputs(.forged, lists: [allow]), rules: rules).decision == .reject)
    }

    @Test func theChallengeListAsksForAPersonEvenOverTheAllowList() {
        let challenge = RiskListEntry(id: UUID(), appID: device.appID, kind: .challenge, subject: .account, value: "u", note: nil, createdAt: Date())
        let allow = RiskListEntry(id: UUID(), appID: device.appID, kind: .allow, subject: .account, value: "u", note: nil, createdAt: Date())
        let quiet = RiskEngine.judge(inputs(lists: [challenge, allow]), rules: rules)
        #expect(quiet.decision == .review && quiet.tags.map(\.tag) == ["list.allow", "list.challenge"])
        var risky = device
        risky.environment = [.hooking, .jailbreak]
        #expect(RiskEngine.judge(inputs(device: risky, lists: [challenge]), rules: rules).decision == .reject)
        #expect(throws: DomainError.self) { try RiskRules(weights: ["list.challenge": 1]).validated() }
    }

    @Test func rulesLayerEventOverAppOverDefaults() throws {
        let app = RiskRules(reviewAt: 20, weights: ["device.proxy": 50])
        let event = RiskRules(rejectAt: 45)
        let effective = RiskRules.effective(app: app, event: event)
        #expect(effective.reviewAt == 20 && effective.rejectAt == 45)
        #expect(effective.weights[.deviceProxy] == 50 && effective.weights[.deviceVPN] == 10)
        #expect(throws: DomainError.self) { try RiskRules(weights: ["token.forged": 1]).validated() }
        #expect(throws: DomainError.self) { try RiskRules(rejectAt: 0).validated() }
    }

    @Test func anAddressOtherThanTheStartsIsTagged() {
        var moved = inputs()
        moved.clientAddress = "203.0.113.9"
        let verdict = RiskEngine.judge(moved, rules: rules)
        #expect(verdict.tags.map(\.tag) == ["network.ip_changed"])
        #expect(verdict.tags[0].reason == "The device started from 198.51.100.1 and the ztoken is used from 203.0.113.9.")
    }

    @Test func aFreshTokenForAnEventTheAppDoesNotHaveIsTheWrongEvent() throws {
        let keys = ServerKeys(box: try SecretBox(masterKey: Array(repeating: 9, count: 32)))
        var generator = SystemRandomNumberGenerator()
        let event = try EventID(validating: 3399)
        let account = try AccountID(validating: "u")
        let token = ZToken.issue(
            app: device.appID,
            device: device.id,
            epoch: 0,
            event: event,
            account: account,
            ttlSeconds: 300,
            fromPage: false,
            at: Date(),
            keys: keys,
            using: &generator
        )
        let query = try RiskQuery(
            ztoken: token,
            eventID: 3399,
            accountID: "u",
            clientIP: "198.51.100.1",
            userAgent: nil,
            app: device.appID,
            ztokenTTL: 300,
            keys: keys,
            at: Date()
        )
        #expect(query.tokenState == .fresh)
        func decided(registered: Bool) -> ZTokenState {
            let policy = RiskPolicy(rules: [:], listEntries: [], events: registered ? [3399] : [], attesters: [])
            let facts = RiskFacts(
                consumption: .consumed(pageURL: nil),
                device: device,
                velocity: quiet,
                policy: policy,
                rules: policy.effectiveRules(for: query.eventID)
            )
            return RiskEngine.decide(query, facts: facts, id: UUID()).tokenState
        }
        #expect(decided(registered: true) == .fresh)
        #expect(decided(registered: false) == .wrongEvent)
    }

    @Test func theSameInputsAlwaysGiveTheSameVerdict() {
        var risky = device
        risky.environment = [.proxy, .vpn, .simulator]
        let first = RiskEngine.judge(inputs(device: risky), rules: rules)
        for _ in 0..<20 { #expect(RiskEngine.judge(inputs(device: risky), rules: rules) == first) }
    }
}

@Suite struct SDKSignatureTests {
    let box = try! SecretBox(masterKey: Array(repeating: 5, count: 32))
    let now = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func aSignedRequestVerifiesAndAnyChangeBreaksIt() throws {
        var generator = SystemRandomNumberGenerator()
        let app = try AppDraft(name: "Shop", platforms: ["ios"]).makeApp(at: now, using: &generator)
        let secrets = issueInitialSecrets(for: app, at: now, box: box, using: &generator)
        let secretKey = secrets[.sdk]!.plaintext
        let body = Array(#"{"deviceId":"d","collectType":0}"#.utf8)
        let canonical = SDKSignedRequest.canonical(
            method: "POST",
            path: "/v1/sdk/device/start",
            timestamp: 1_800_000_000,
            nonce: "n0nce-n0nce-n0nce",
            body: body
        )
        let signature = SDKSignedRequest.sign(canonical: canonical, secretKey: secretKey)
        let request = try SDKSignedRequest.parse(
            appKey: app.appKey.rawValue,
            timestamp: "1800000000",
            nonce: "n0nce-n0nce-n0nce",
            signature: signature
        ).get()
        let stored = secrets.values.map(\.stored)
        #expect(throws: Never.self) {
            try request.verify(method: "POST", path: "/v1/sdk/device/start", body: body, app: app, secrets: stored, at: now, box: box).get()
        }
        #expect(throws: SDKRefusal.signatureMismatch) {
            try request.verify(method: "POST", path: "/v1/sdk/device/start", body: body + [0x20], app: app, secrets: stored, at: now, box: box).get()
        }
        #expect(throws: SDKRefusal.timestampOutsideWindow) {
            try request.verify(
                method: "POST",
                path: "/v1/sdk/device/start",
                body: body,
                app: app,
                secrets: stored,
                at: now.addingTimeInterval(301),
                box: box
            )
            .get()
        }
    }

    @Test func headerProblemsMapToTheSDKCodes() {
        #expect(SDKSignedRequest.parse(appKey: nil, timestamp: "1", nonce: "x", signature: "y") == .failure(.appKeyMissing))
        #expect(SDKSignedRequest.parse(appKey: "BAD!", timestamp: "1", nonce: "x", signature: "y") == .failure(.appKeyUnknown))
        #expect(SDKSignedRequest.parse(appKey: "abcde", timestamp: nil, nonce: nil, signature: nil) == .failure(.signatureMissing))
        #expect(
            SDKSignedRequest.parse(appKey: "abcde", timestamp: "soon", nonce: "n0nce-n0nce-n0nce", signature: "AA") == .failure(.signatureMalformed)
        )
        #expect(SDKRefusal.appKeyMissing.status.rawValue == -9)
        #expect(SDKRefusal.signatureMismatch.status.rawValue == -11)
        #expect(SDKRefusal.appDisabled.status.rawValue == -12)
    }
}

/// What hardware attestation adds to a decision, and how it overrules what the SDK says.
@Suite struct HardwareRiskTests {
    let base = RiskEngineTests()

    func tags(_ hardware: HardwareAttestationState, environment: EnvironmentSignals = [], required: Bool = false) -> [String] {
        var device = base.device
        device.environment = environment
        device.hardware = hardware
        var inputs = base.inputs(device: device)
        inputs.hardwareRequired = required
        return RiskEngine.judge(inputs, rules: base.rules).tags.map(\.tag)
    }

    @Test func aHardwareAttestedDeviceIsNoSimulatorButARootedOneIsJailbroken() {
        let enclave = HardwareFacts(app: "com.example.shop", securityLevel: .secureEnclave)
        #expect(tags(.attested(enclave, at: Date()), environment: [.simulator]) == ["attestation.hardware"])
        let rooted = HardwareFacts(app: "com.example.shop", securityLevel: .trustedEnvironment, verifiedBoot: false, deviceLocked: false)
        #expect(tags(.attested(rooted, at: Date())) == ["attestation.hardware", "device.jailbreak"])
        #expect(tags(.attested(rooted, at: Date()), environment: [.jailbreak]) == ["attestation.hardware", "device.jailbreak"], "one hit, not two")
        let software = HardwareFacts(app: "com.example.shop", securityLevel: .software)
        #expect(tags(.attested(software, at: Date()), environment: [.simulator], required: true) == ["attestation.missing", "device.simulator"])
    }

    @Test func missingAndFailedShowWhereTheyMatter() {
        #expect(tags(.none) == [])
        #expect(tags(.none, required: true) == ["attestation.missing"])
        #expect(tags(.failed(at: Date())) == ["attestation.failed"])
        let facts = HardwareFacts(app: "a", securityLevel: .strongBox)
        let attestedAt = Date(timeIntervalSince1970: 1_800_000_000)
        #expect(
            HardwareAttestationState(facts: facts, attestedAt: attestedAt, failedAt: attestedAt.addingTimeInterval(60))
                == .attested(facts, at: attestedAt)
        )
        #expect(HardwareAttestationState(facts: nil, attestedAt: nil, failedAt: attestedAt) == .failed(at: attestedAt))
    }
}
