import Crypto
import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseStore
import GatehouseTestDevice
import GatehouseTestSupport
import Testing
import X509

/// Hardware attestation's refusals over loopback HTTP on both stores: each bad attestation is a
/// documented 4xx with its reason, and none stores a key.
@Suite struct HardwareAttestationFlowTests {
    typealias Flow = DeviceRiskFlowTests
    static let digest = String(repeating: "ab", count: 32)

    struct Devices {
        let apple: SoftwareAppAttestDevice
        let android: SoftwareAndroidKeystore
        /// Its root is trusted and its serial on the revocation list.
        let revokedAndroid: SoftwareAndroidKeystore
        let roots: URL
        let revocations: URL
    }

    /// Devices whose roots the server trusts (the test-only setting), and a revocation list naming
    /// one of those roots.
    static func withDevices(_ body: (Devices) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-hardware-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let apple = try SoftwareAppAttestDevice(teamID: "ABCDE12345", bundleID: "com.example.shop")
        let android = try SoftwareAndroidKeystore()
        let revokedAndroid = try SoftwareAndroidKeystore()
        let roots = directory.appendingPathComponent("roots.pem")
        try [apple.root, android.root, revokedAndroid.root].map { try $0.serializeAsPEM().pemString }.joined(separator: "\n")
            .write(to: roots, atomically: true, encoding: .utf8)
        // Google's format: lower-case hex without leading zeros.
        let serial = String(Hex.encode(revokedAndroid.root.serialNumber.bytes).drop { $0 == "0" })
        let revocations = directory.appendingPathComponent("status.json")
        try #"{"entries":{"\#(serial)":{"status":"REVOKED","reason":"KEY_COMPROMISE"}}}"#.write(to: revocations, atomically: true, encoding: .utf8)
        try await body(Devices(apple: apple, android: android, revokedAndroid: revokedAndroid, roots: roots, revocations: revocations))
    }

    @Test(arguments: TestStoreKind.available)
    func everyBadAttestationIsRefusedWithItsReasonAndKeepsNothing(kind: TestStoreKind) async throws {
        try await Self.withDevices { devices in
            try await withServer(
                kind,
                configure: {
                    $0.maxBodyBytes = 65_536
                    $0.testAttestationRoots = devices.roots.path
                    $0.androidRevocationList = devices.revocations.path
                }
            ) { server in
                let app = try await Flow.createApp(server)
                let device = try await Flow.startDevice(server, app)
                for body in [
                    #"{"attestId":"ios","kind":"appAttest","appAttest":{"teamId":"ABCDE12345","bundleIds":["com.example.shop"],"environment":"development"}}"#,
                    #"{"attestId":"android","kind":"androidKeyAttestation","androidKeyAttestation":{"packageNames":["com.example.shop"],"signingCertificateDigests":["\#(Self.digest)"]}}"#,
                ] {
                    let created = try await server.send(.post, "/v1/admin/apps/\(app.appKey)/attesters", body: body)
                    #expect(created.status == .created, "\(String(decoding: created.body, as: UTF8.self))")
                }
                let calls = Calls(server: server, app: app, device: device)
                try await Self.appleRefusals(calls, devices.apple)
                try await Self.androidRefusals(calls, devices.android, revoked: devices.revokedAndroid)
                // Rules weigh the attestation tags like the others.
                let weights = #"{"weights":{"attestation.hardware":0,"attestation.failed":70,"attestation.missing":55}}"#
                let rules = try await server.send(.put, "/v1/admin/apps/\(app.appKey)/risk/rules", body: weights)
                #expect(rules.status == .ok, "\(String(decoding: rules.body, as: UTF8.self))")
                let read = try await server.send(.get, "/v1/admin/apps/\(app.appKey)/risk/rules")
                let stored = try #require(read.json?["rules"] as? [String: Any] ?? read.json)
                let storedWeights = (stored["weights"] as? [String: Int]) ?? [:]
                #expect(storedWeights["attestation.failed"] == 70 && storedWeights["attestation.missing"] == 55, "\(stored)")
            }
        }
    }

    static func appleRefusals(_ calls: Calls, _ apple: SoftwareAppAttestDevice) async throws {
        #expect(try await calls.token("ios", [:]) == "hardware_attestation_required")
        let keyID = apple.generateKey()
        func attestation(_ nonce: String, tampering: SoftwareAppAttestDevice.Tampering = .init()) throws -> String {
            try apple.attestKey(keyID, clientDataHash: Data(SHA256.hash(data: Data(nonce.utf8))), tampering: tampering).base64EncodedString()
        }
        let nested = Data(Array(repeating: 0x81, count: 64) + [0x00]).base64EncodedString()
        // Made over fresh nonces, one request each.
        for (make, reason) in [
            ({ (n: String) throws in try attestation("another nonce") }, "attestation_nonce_mismatch"),
            ({ (n: String) throws in try attestation(n, tampering: tampered(\.counter, 1)) }, "attestation_counter_invalid"),
            ({ (n: String) throws in try attestation(n, tampering: tampered(\.bundleID, "com.other.app")) }, "attestation_app_mismatch"),
            (
                { (n: String) throws in try attestation(n, tampering: tampered(\.aaguid, Array("appattest".utf8) + Array(repeating: 0, count: 7))) },
                "attestation_environment_mismatch"
            ),
            (
                { (n: String) throws in
                    try attestation(
                        n,
                        tampering: tampered(\.leafValidity, Date(timeIntervalSinceNow: -86_400 * 3)...Date(timeIntervalSinceNow: -86_400))
                    )
                },
                "untrusted_attestation_chain"
            ),
            ({ (_: String) throws in "not base64!" }, "malformed_attestation"),
            ({ (n: String) throws in String(try attestation(n).prefix(600)) }, "malformed_attestation"),
            ({ (_: String) throws in nested }, "malformed_attestation"),
        ] as [((String) throws -> String, String)] {
            let fresh = try await calls.nonce("ios")
            #expect(try await calls.token("ios", ["nonce": fresh, "keyId": keyID, "attestation": try make(fresh)]) == reason, "\(reason)")
        }
        // Another root's device, then an assertion by a key nobody attested.
        let stranger = try SoftwareAppAttestDevice(teamID: "ABCDE12345", bundleID: "com.example.shop")
        let strangerKey = stranger.generateKey()
        let fresh = try await calls.nonce("ios")
        let foreign = try stranger.attestKey(strangerKey, clientDataHash: Data(SHA256.hash(data: Data(fresh.utf8)))).base64EncodedString()
        #expect(try await calls.token("ios", ["nonce": fresh, "keyId": strangerKey, "attestation": foreign]) == "untrusted_attestation_chain")
        #expect(try await calls.token("ios", ["nonce": try await calls.nonce("ios"), "keyId": keyID, "assertion": "AAEC"]) == "attested_key_unknown")
        // A good one passes once; the same request again is a replayed nonce.
        let last = try await calls.nonce("ios")
        let accepted = ["nonce": last, "keyId": keyID, "attestation": try attestation(last)]
        #expect(try await calls.token("ios", accepted) == nil)
        #expect(try await calls.token("ios", accepted) == "attestation_nonce_reused")
        let again = try await calls.nonce("ios")
        #expect(try await calls.token("ios", ["nonce": again, "keyId": keyID, "attestation": try attestation(again)]) == "attestation_key_reused")
        // Only the good key was kept.
        let kept = (try await calls.keptKey(keyID), try await calls.keptKey(strangerKey))
        #expect(kept == (true, false))
    }

    static func androidRefusals(_ calls: Calls, _ android: SoftwareAndroidKeystore, revoked: SoftwareAndroidKeystore) async throws {
        func chain(
            _ nonce: String,
            by keystore: SoftwareAndroidKeystore? = nil,
            _ change: (inout SoftwareAndroidKeystore.Properties) -> Void = { _ in }
        )
            throws -> [String]
        {
            var properties = SoftwareAndroidKeystore.Properties()
            change(&properties)
            return try (keystore ?? android).generateKey(challenge: Array(nonce.utf8), properties: properties).chain.map {
                Data($0).base64EncodedString()
            }
        }
        for (make, reason) in [
            ({ (n: String) throws in try chain(n) { $0.securityLevel = 0 } }, "attestation_integrity_insufficient"),
            ({ (n: String) throws in try chain(n) { $0.verifiedBootState = 2 } }, "attestation_integrity_insufficient"),
            ({ (n: String) throws in try chain(n) { $0.packageName = "com.other.app" } }, "attestation_app_mismatch"),
            ({ (_: String) throws in try chain("another nonce") }, "attestation_nonce_mismatch"),
            ({ (n: String) throws in Array(try chain(n).prefix(1)) }, "malformed_attestation"),
            ({ (n: String) throws in Array(repeating: try chain(n)[0], count: 10) }, "untrusted_attestation_chain"),
            ({ (_: String) throws in ["AAEC", "AAEC"] }, "malformed_attestation"),
            ({ (n: String) throws in try chain(n, by: revoked) }, "attestation_revoked"),
        ] as [((String) throws -> [String], String)] {
            let nonce = try await calls.nonce("android")
            #expect(try await calls.token("android", ["nonce": nonce, "certificateChain": try make(nonce)]) == reason, "\(reason)")
        }
        let twenty = try await calls.nonce("android")
        #expect(
            try await calls.token("android", ["nonce": twenty, "certificateChain": Array(repeating: "AAEC", count: 20)]) == "malformed_attestation"
        )
        // A good key passes, and signs the next nonce; a signature over another nonce does not pass.
        let nonce = try await calls.nonce("android")
        let generated = try android.generateKey(challenge: Array(nonce.utf8))
        #expect(
            try await calls.token("android", ["nonce": nonce, "certificateChain": generated.chain.map { Data($0).base64EncodedString() }]) == nil
        )
        let leaf = try Certificate(derEncoded: generated.chain[0])
        let keyID = Data(SHA256.hash(data: try leaf.publicKey.serializeAsPEM().derBytes)).base64EncodedString()
        let next = try await calls.nonce("android")
        let signature = try android.sign(generated.handle, Data(next.utf8)).base64EncodedString()
        let other = try await calls.nonce("android")
        #expect(try await calls.token("android", ["nonce": other, "keyId": keyID, "assertion": signature]) == "invalid_assertion_signature")
        #expect(try await calls.token("android", ["nonce": next, "keyId": keyID, "assertion": signature]) == nil)
        #expect(try await calls.keptKey(keyID))
    }

    static func tampered<Value>(
        _ field: WritableKeyPath<SoftwareAppAttestDevice.Tampering, Value>,
        _ value: Value
    ) -> SoftwareAppAttestDevice.Tampering {
        var tampering = SoftwareAppAttestDevice.Tampering()
        tampering[keyPath: field] = value
        return tampering
    }

    struct Calls {
        let server: ServerFixture
        let app: Flow.AppCredentials
        let device: String

        func nonce(_ attestID: String) async throws -> String {
            let answer = try await Flow.sdk(server, app, "/v1/attest/challenges", #"{"attestId":"\#(attestID)","deviceId":"\#(device)"}"#)
            return try #require(answer.read(Components.Schemas.AttestChallengeResponse.self)?.nonce)
        }

        /// The refusal's reason, or nil when a token was issued. Never a 5xx.
        func token(_ attestID: String, _ fields: [String: Any]) async throws -> String? {
            var body = fields
            body["attestId"] = attestID
            body["deviceId"] = device
            let answer = try await Flow.sdk(
                server,
                app,
                "/v1/attest/tokens",
                String(decoding: try JSONSerialization.data(withJSONObject: body), as: UTF8.self)
            )
            #expect(answer.status.code < 500)
            return answer.status == .ok ? nil : answer.sdkRefusal?.reason ?? "status \(answer.status.code)"
        }

        func keptKey(_ keyID: String) async throws -> Bool {
            let key = Base64URL.encode(Array(Data(base64Encoded: keyID)!))
            return try await StoreService.withStore(server.store.location, logger: TestDatabase.logger) { store in
                let appID = try #require(try await store.apps.appWithSecrets(withKey: AppKey(validating: app.appKey))?.app.id)
                return try await store.attestation.attestedKey(appID: appID, keyID: key) != nil
            }
        }
    }
}
