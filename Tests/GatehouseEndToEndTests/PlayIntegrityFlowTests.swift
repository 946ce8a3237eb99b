import Crypto
import CryptoExtras
import Foundation
import GatehouseClient
import GatehouseCore
import GatehouseTestSupport
import Hummingbird
import NIOCore
import Testing

/// Play Integrity end to end against the built server: an operator creates a playIntegrity attester
/// with both modes (secrets never shown again); a device gets tokens with a classic token (made as
/// Google makes them, with this test's response keys) and a standard one, decoded by a Google stand-in
/// on loopback that checks the service account's RS256 assertion before answering; every refusal is a
/// documented 4xx, Google's slowness, errors and outage a 429 to retry; and the verdict's facts reach
/// the risk decision, with the farm signal.
@Suite(.serialized) struct PlayIntegrityFlowTests {
    static let package = "com.example.shop"
    static let digest = "9lD7Dz3AjKHi2Cz4hAT3iiRVsivz3cRi-Bq6j7sZcxE"

    let signing = P256.Signing.PrivateKey()
    let aes = SymmetricKey(size: .bits256)
    let account = try! _RSA.Signing.PrivateKey(keySize: .bits2048)

    @Test(arguments: TestStoreKind.available)
    func aDeviceAttestsWithPlayIntegrity(kind: TestStoreKind) async throws {
        let google = FakeGoogle(accountKey: account.publicKey)
        try await withLoopbackServer(google.router()) { googleURL in
            let base = googleURL.absoluteString.hasSuffix("/") ? String(googleURL.absoluteString.dropLast()) : googleURL.absoluteString
            google.tokenURI.set(base + "/token")
            // The deadline ends the slow upstream's wait (it answers only when the test lets it) and must
            // leave every other call its answer from this process's fake Google while every suite runs
            // beside it on two cores: 1 s and then 3 s each ran out once there (a 429 where the test
            // expected Google's answer); alone, each call takes milliseconds.
            let environment = ["GATEHOUSE_STS_PRIVATE_ENDPOINTS": "true", "GATEHOUSE_PLAY_INTEGRITY_TIMEOUT_MS": "10000"]
            try await BuiltServer.with(kind, environment: environment) { server in
                let app = try await RegisteredApp.create(server)
                try await createAttester(server, app, decodeEndpoint: base, tokenURI: base + "/token")
                let phone = Gatehouse(.init(baseURL: server.baseURL, appKey: app.appKey, secretKey: app.secretKey, clientDeviceID: "pi-phone"))
                try await phone.start()
                var sdk = HardwareAttestationTests.SDKCalls(server: server, app: app, deviceID: try #require(await phone.deviceID))
                sdk.attestID = "android-pi"
                try await classic(sdk)
                try await standard(sdk, google: google)
                try await riskAndFarm(server, app, phone: phone, sdk: sdk)
                try await googleFailing(sdk, google: google)
            }
        }
    }

    private func createAttester(_ server: BuiltServer, _ app: RegisteredApp, decodeEndpoint: String, tokenURI: String) async throws {
        let decryption = aes.withUnsafeBytes { Data($0).base64EncodedString() }
        let verification = signing.publicKey.derRepresentation.base64EncodedString()
        let accountJSON = try serviceAccountJSON(tokenURI: tokenURI)
        let body: [String: Any] = [
            "attestId": "android-pi", "kind": "playIntegrity", "routes": [["method": "*", "pathPrefix": "/api/android/"]],
            "playIntegrity": [
                "packageName": Self.package, "certificateDigests": [Self.digest], "minimumIntegrity": "device", "modes": ["classic", "standard"],
                "decodeEndpoint": decodeEndpoint, "decryptionKey": decryption, "verificationKey": verification, "serviceAccount": accountJSON,
            ],
        ]
        let json = String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)
        let created = try await server.admin(.POST, "v1/admin/apps/\(app.appKey)/attesters", json)
        #expect(created.status == 201, "\(created.body)")
        let read = try await server.admin(.GET, "v1/admin/apps/\(app.appKey)/attesters/android-pi")
        for answer in [created, read] {
            #expect(!answer.body.contains(decryption) && !answer.body.contains("PRIVATE KEY") && !answer.body.contains("decryptionKey"))
            #expect(answer.body.contains(#""modes":["classic","standard"]"#), "\(answer.body)")
        }
        // Classic mode without its keys, or an internal endpoint where the server does not allow one, is refused.
        let missing = try await server.admin(
            .POST,
            "v1/admin/apps/\(app.appKey)/attesters",
            #"{"attestId":"pi-2","kind":"playIntegrity","playIntegrity":{"packageName":"a.b","certificateDigests":["\#(Self.digest)"],"modes":["classic"]}}"#
        )
        #expect(missing.status == 400 && missing.body.contains("decryptionKey"), "\(missing.body)")
        // The same account, and a decode endpoint where nothing listens: Google not answering at all.
        var down = body
        down["attestId"] = "android-pi-down"
        down["routes"] = []
        down["playIntegrity"] = [
            "packageName": Self.package, "certificateDigests": [Self.digest], "modes": ["standard"], "decodeEndpoint": "http://127.0.0.1:1",
            "serviceAccount": accountJSON,
        ]
        let downJSON = String(decoding: try JSONSerialization.data(withJSONObject: down), as: UTF8.self)
        #expect(try await server.admin(.POST, "v1/admin/apps/\(app.appKey)/attesters", downJSON).status == 201)
    }

    /// A classic token over the challenge's nonce opens; the nonce is spent by the first try, right or wrong.
    private func classic(_ sdk: HardwareAttestationTests.SDKCalls) async throws {
        let challenge = try await sdk.challenge()
        let nonce = try #require(challenge.json?["nonce"] as? String)
        #expect(challenge.json?["requestHash"] as? String == PlayIntegritySettings.requestHash(nonce: nonce))
        let good = try await sdk.tokenAnswer(["nonce": nonce, "integrityToken": classicToken(verdict(nonce: nonce)), "integrityRequest": "classic"])
        #expect(good.status == 200, "\(good.body)")
        let claims = try HardwareAttestationTests.claims(try #require(good.json?["token"] as? String))
        #expect(claims["att"] as? String == "play_integrity" && claims["integrity"] as? String == "device")
        // Both modes: the request must say which made the token (refused before the nonce is spent).
        #expect(try await sdk.token(["nonce": nonce, "integrityToken": classicToken(verdict(nonce: nonce))]).reason == "integrity_refused")
        #expect(try await sdk.token(["nonce": nonce]).reason == "integrity_token_required")
        #expect(
            try await sdk.token(["nonce": nonce, "integrityToken": classicToken(verdict(nonce: nonce)), "integrityRequest": "classic"]).reason
                == "attestation_nonce_reused"
        )

        // Each refusal on its own, each with a fresh nonce that it spends.
        let refusals: [(String, @Sendable (String) -> [UInt8])] = [
            ("wrong_nonce", { _ in verdictBytes(nonce: "another-nonce-0123456789") }),
            ("wrong_package", { verdictBytes(nonce: $0, package: "com.example.other") }),
            ("stale", { verdictBytes(nonce: $0, millis: Int64(Date().timeIntervalSince1970 * 1000) - 3_600_000) }),
            ("integrity_too_low", { verdictBytes(nonce: $0, verdicts: ["MEETS_BASIC_INTEGRITY"]) }),
            ("unrecognized_app", { verdictBytes(nonce: $0, recognition: "UNRECOGNIZED_VERSION") }),
        ]
        for (reason, make) in refusals {
            let fresh = try await sdk.nonce()
            let refused = try await sdk.tokenAnswer(["nonce": fresh, "integrityToken": classicToken(make(fresh)), "integrityRequest": "classic"])
            #expect(
                refused.status == 400 && refused.json?["reason"] as? String == "integrity_refused" && refused.body.contains(reason),
                "\(refused.body)"
            )
            let retried = try await sdk.token(["nonce": fresh, "integrityToken": classicToken(verdict(nonce: fresh)), "integrityRequest": "classic"])
            #expect(retried.reason == "attestation_nonce_reused")
        }
        // Signed by another key, altered, or not a token at all: refused, never a 5xx.
        let fresh = try await sdk.nonce()
        let forged = classicToken(verdict(nonce: fresh), signer: P256.Signing.PrivateKey())
        #expect(try await sdk.tokenAnswer(["nonce": fresh, "integrityToken": forged, "integrityRequest": "classic"]).body.contains("bad_signature"))
        for garbage in [
            "a.b.c.d.e", String(repeating: "x", count: 16_384), classicToken(verdict(nonce: fresh)).replacingOccurrences(of: ".", with: ".."),
        ] {
            let answer = try await sdk.tokenAnswer(["nonce": try await sdk.nonce(), "integrityToken": garbage, "integrityRequest": "classic"])
            #expect((400..<500).contains(answer.status), "\(answer.status) \(answer.body)")
        }
    }

    /// A standard token, decoded by Google (here its stand-in) with the access token the assertion bought, once.
    private func standard(_ sdk: HardwareAttestationTests.SDKCalls, google: FakeGoogle) async throws {
        for round in 1...2 {
            let challenge = try await sdk.challenge()
            let nonce = try #require(challenge.json?["nonce"] as? String)
            let hash = try #require(challenge.json?["requestHash"] as? String)
            let token = "standard-\(round)"
            google.verdicts.set(token, verdictBytes(requestHash: hash))
            let answer = try await sdk.tokenAnswer(["nonce": nonce, "integrityToken": token, "integrityRequest": "standard"])
            #expect(answer.status == 200, "\(answer.body)")
        }
        #expect(google.tokensIssued.value == 1, "the access token is kept until it expires")
        // A request hash of another nonce is refused as the wrong nonce.
        let nonce = try await sdk.nonce()
        google.verdicts.set("standard-other", verdictBytes(requestHash: PlayIntegritySettings.requestHash(nonce: "other")))
        let refused = try await sdk.tokenAnswer(["nonce": nonce, "integrityToken": "standard-other", "integrityRequest": "standard"])
        #expect(refused.status == 400 && refused.body.contains("wrong_nonce"), "\(refused.body)")
        // A token Google refuses (400) is the device's fault.
        let rejected = try await sdk.tokenAnswer(["nonce": try await sdk.nonce(), "integrityToken": "google-400", "integrityRequest": "standard"])
        #expect(rejected.status == 400 && rejected.body.contains("malformed"), "\(rejected.body)")
    }

    /// The verdict's facts reach the decision; many devices attesting from one address show as a farm.
    private func riskAndFarm(_ server: BuiltServer, _ app: RegisteredApp, phone: Gatehouse, sdk: HardwareAttestationTests.SDKCalls) async throws {
        let rules = try await server.admin(.PUT, "v1/admin/apps/\(app.appKey)/risk/rules", #"{"maxAddressAttestationsPerHour":2}"#)
        #expect(rules.status == 200, "\(rules.body)")
        let nonce = try await sdk.nonce()
        let risky = verdictBytes(nonce: nonce, activity: "LEVEL_4", licensing: "UNLICENSED", apps: ["UNKNOWN_CAPTURING"], protect: "HIGH_RISK")
        #expect(try await sdk.token(["nonce": nonce, "integrityToken": classicToken(risky), "integrityRequest": "classic"]).status == 200)
        // Two more devices attest from this address (loopback): three, over the threshold of two.
        for name in ["pi-phone-2", "pi-phone-3"] {
            let other = Gatehouse(.init(baseURL: server.baseURL, appKey: app.appKey, secretKey: app.secretKey, clientDeviceID: name))
            try await other.start()
            var calls = HardwareAttestationTests.SDKCalls(server: server, app: app, deviceID: try #require(await other.deviceID))
            calls.attestID = "android-pi"
            let fresh = try await calls.nonce()
            #expect(
                try await calls.token(["nonce": fresh, "integrityToken": classicToken(verdict(nonce: fresh)), "integrityRequest": "classic"]).status
                    == 200
            )
        }
        let decision = try await SeedFlowTests.backend(server, app).queryRisk(
            ztoken: try phone.zToken(event: 3301, account: "alice"),
            eventID: 3301,
            accountID: "alice",
            clientIP: "127.0.0.1"
        )
        let tags = Set(decision.tags.map(\.tag))
        for expected in [
            "attestation.play_integrity", "device.activity_high", "app.unlicensed", "environment.risky_apps", "environment.play_protect_risk",
            "attestation.farm",
        ] {
            #expect(tags.contains(expected), "\(expected) in \(tags)")
        }
        #expect(!tags.contains("device.integrity_failed") && !tags.contains("app.unrecognized"), "\(tags)")
    }

    /// Google slow, failing, or out: a 429 with Retry-After within the deadline, never a 5xx or a hang;
    /// after five failures in a row the breaker answers at once.
    private func googleFailing(_ sdk: HardwareAttestationTests.SDKCalls, google: FakeGoogle) async throws {
        var unreachable = sdk
        unreachable.attestID = "android-pi-down"
        let unreachableNonce = try await unreachable.nonce()
        let silent = try await unreachable.tokenAnswer([
            "nonce": unreachableNonce, "integrityToken": "standard-nowhere", "integrityRequest": "standard",
        ])
        #expect(silent.status == 429 && silent.json?["reason"] as? String == "integrity_unavailable", "\(silent.status) \(silent.body)")

        for token in ["google-slow", "google-500", "google-500", "google-500", "google-500"] {
            let answer = try await sdk.tokenAnswer(["nonce": try await sdk.nonce(), "integrityToken": token, "integrityRequest": "standard"])
            #expect(answer.status == 429 && answer.json?["reason"] as? String == "integrity_unavailable", "\(answer.status) \(answer.body)")
            #expect(answer.headers.first(name: "Retry-After") != nil)
            if token == "google-slow" {
                // The deadline ended the wait, not Google's answer: Google has not answered yet.
                #expect(!google.slowAnswered.value, "Gatehouse waited for Google past its deadline")
                google.slowReleased.set(true)
            }
        }
        let calls = google.decodeCalls.value
        let nonce = try await sdk.nonce()
        google.verdicts.set("standard-during-outage", verdictBytes(requestHash: PlayIntegritySettings.requestHash(nonce: nonce)))
        let open = try await sdk.tokenAnswer(["nonce": nonce, "integrityToken": "standard-during-outage", "integrityRequest": "standard"])
        #expect(open.status == 429 && open.body.contains("breaker"), "\(open.body)")
        #expect(google.decodeCalls.value == calls, "the open breaker does not call Google")
    }

    // MARK: tokens as Google makes them

    private func verdict(nonce: String) -> [UInt8] { verdictBytes(nonce: nonce) }

    func classicToken(_ payload: [UInt8], signer: P256.Signing.PrivateKey? = nil) -> String {
        let signed = JWSSigningKey.es256(kid: "play", key: signer ?? signing).sign(payload: payload, type: "JWT")
        return CompactJWE.encrypt(Array(signed.utf8), key: aes) ?? ""
    }

    private func serviceAccountJSON(tokenURI: String) throws -> String {
        let object: [String: String] = [
            "type": "service_account", "client_email": "gatehouse@example-project.iam.gserviceaccount.com", "private_key_id": "k1",
            "private_key": account.pkcs8PEMRepresentation, "token_uri": tokenURI,
        ]
        return String(decoding: try JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }
}

/// A verdict payload as Google documents it, now, for the test package.
@Sendable func verdictBytes(
    nonce: String? = nil,
    requestHash: String? = nil,
    package: String = PlayIntegrityFlowTests.package,
    millis: Int64 = Int64(Date().timeIntervalSince1970 * 1000),
    verdicts: [String] = ["MEETS_BASIC_INTEGRITY", "MEETS_DEVICE_INTEGRITY"],
    recognition: String = "PLAY_RECOGNIZED",
    activity: String? = nil,
    licensing: String = "LICENSED",
    apps: [String] = ["KNOWN_INSTALLED"],
    protect: String = "NO_ISSUES"
) -> [UInt8] {
    var request: [String: Any] = ["requestPackageName": package, "timestampMillis": String(millis)]
    if let nonce { request["nonce"] = nonce }
    if let requestHash { request["requestHash"] = requestHash }
    var device: [String: Any] = ["deviceRecognitionVerdict": verdicts]
    if let activity { device["recentDeviceActivity"] = ["deviceActivityLevel": activity] }
    let payload: [String: Any] = [
        "requestDetails": request,
        "appIntegrity": [
            "appRecognitionVerdict": recognition, "packageName": package, "certificateSha256Digest": [PlayIntegrityFlowTests.digest],
            "versionCode": "42",
        ],
        "deviceIntegrity": device, "accountDetails": ["appLicensingVerdict": licensing],
        "environmentDetails": ["appAccessRiskVerdict": ["appsDetected": apps], "playProtectVerdict": protect],
    ]
    return Array((try? JSONSerialization.data(withJSONObject: payload)) ?? Data())
}
