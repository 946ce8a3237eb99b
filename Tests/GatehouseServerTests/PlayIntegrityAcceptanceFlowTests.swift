import Crypto
import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseTestSupport
import HTTPTypes
import Testing

/// Where hardware is required, a Play Integrity verdict counts only where the operator says so, at the
/// lowest level named: an attester's token call and gate, and an STS role. Over loopback HTTP on both
/// stores, with classic tokens made as Google makes them.
@Suite struct PlayIntegrityAcceptanceFlowTests {
    typealias Flow = DeviceRiskFlowTests
    typealias Attest = AttestationFlowTests

    let signing = P256.Signing.PrivateKey()
    let aes = SymmetricKey(size: .bits256)

    @Test(arguments: TestStoreKind.available)
    func aVerdictStandsInForHardwareOnlyWhereAccepted(kind: TestStoreKind) async throws {
        let sts = StubSTS(accessKeyID: "AKIASTUB", secret: "stub-long-term-secret")
        try await sts.serve { stsURL in
            try await withServer(kind, configure: { $0.stsPrivateEndpoints = true }) { server in
                let app = try await Flow.createApp(server)
                try await createAttesters(server, app)
                let device = try await Flow.startDevice(server, app)

                // Not accepted yet: the attester wants a hardware proof.
                let before = try await redeem(server, app, device, level: "MEETS_DEVICE_INTEGRITY")
                #expect(before.status == .badRequest && before.json?["reason"] as? String == "hardware_attestation_required", "\(before.json ?? [:])")

                try await accept(server, app, #"{"attestId":"android-pi","minimumIntegrity":"strong"}"#)
                let tooLow = try await redeem(server, app, device, level: "MEETS_DEVICE_INTEGRITY")
                #expect(tooLow.status == .badRequest && "\(tooLow.json ?? [:])".contains("integrity_too_low"), "\(tooLow.json ?? [:])")

                try await accept(server, app, #"{"attestId":"android-pi","minimumIntegrity":"device"}"#)
                let issued = try await redeem(server, app, device, level: "MEETS_DEVICE_INTEGRITY")
                #expect(issued.status == .ok, "\(issued.json ?? [:])")
                let token = try issued.decoded(Components.Schemas.AttestTokenResponse.self).token
                #expect(try await gateReason(server, app, token: token) == nil)

                // The role asks for hardware: the verdict is no hardware until the role takes it.
                let caller = STSFlowTests.Caller(app: app, device: device, token: token)
                let role =
                    #"{"roleId":"uploads","provider":"aws","stsEndpoint":"\#(stsURL)","region":"us-east-1","roleArn":"arn:aws:iam::123456789012:role/u","#
                    + #""attestId":"pay","accessKeyId":"AKIASTUB","accessKeySecret":"stub-long-term-secret","requireHardwareAttestation":true}"#
                #expect(try await server.send(.post, "/v1/admin/apps/\(app.appKey)/roles", body: role).status == .created)
                let refused = try await STSFlowTests.token(server, caller, role: "uploads")
                #expect(refused.status == .forbidden && "\(refused.json ?? [:])".contains("hardware"), "\(refused.json ?? [:])")
                let strong = try await server.send(.patch, "/v1/admin/apps/\(app.appKey)/roles/uploads", body: #"{"acceptPlayIntegrity":"strong"}"#)
                #expect(strong.status == .ok && strong.json?["acceptPlayIntegrity"] as? String == "strong", "\(strong.json ?? [:])")
                #expect(try await STSFlowTests.token(server, caller, role: "uploads").status == .forbidden)
                _ = try await server.send(.patch, "/v1/admin/apps/\(app.appKey)/roles/uploads", body: #"{"acceptPlayIntegrity":"device"}"#)
                let vended = try await STSFlowTests.token(server, caller, role: "uploads")
                #expect(vended.status == .ok, "\(vended.json ?? [:])")

                // Hardware only again: the gate no longer opens to the token it issued.
                try await accept(server, app, #"{"attestId":"android-pi","minimumIntegrity":"none"}"#)
                #expect(try await gateReason(server, app, token: token) == "hardware_required")
            }
        }
    }

    private func createAttesters(_ server: ServerFixture, _ app: Flow.AppCredentials) async throws {
        let decryption = aes.withUnsafeBytes { Data($0).base64EncodedString() }
        let verification = signing.publicKey.derRepresentation.base64EncodedString()
        let reader = try await server.send(
            .post,
            "/v1/admin/apps/\(app.appKey)/attesters",
            body: #"{"attestId":"android-pi","kind":"playIntegrity","playIntegrity":{"packageName":"com.example.shop","#
                + #""certificateDigests":["9lD7Dz3AjKHi2Cz4hAT3iiRVsivz3cRi-Bq6j7sZcxE"],"modes":["classic"],"#
                + #""decryptionKey":"\#(decryption)","verificationKey":"\#(verification)"}}"#
        )
        #expect(reader.status == .created, "\(reader.json ?? [:])")
        let pay = try await server.send(
            .post,
            "/v1/admin/apps/\(app.appKey)/attesters",
            body: #"{"attestId":"pay","pow":{"maxNumber":1000},"adaptive":false,"requireHardwareAttestation":true,"#
                + #""routes":[{"method":"*","pathPrefix":"/api/pay/"}]}"#
        )
        #expect(pay.status == .created, "\(pay.json ?? [:])")
        // Only a playIntegrity attester can read for another, and only where hardware is required.
        let wrong = try await server.send(
            .patch,
            "/v1/admin/apps/\(app.appKey)/attesters/pay",
            body: #"{"acceptPlayIntegrity":{"attestId":"pay","minimumIntegrity":"device"}}"#
        )
        #expect(wrong.status == .badRequest, "\(wrong.json ?? [:])")
    }

    private func accept(_ server: ServerFixture, _ app: Flow.AppCredentials, _ acceptance: String) async throws {
        let changed = try await server.send(.patch, "/v1/admin/apps/\(app.appKey)/attesters/pay", body: #"{"acceptPlayIntegrity":\#(acceptance)}"#)
        #expect(changed.status == .ok, "\(changed.json ?? [:])")
    }

    /// A token request of `pay`: its proof-of-work solved, and a classic token over its nonce in place of hardware.
    private func redeem(_ server: ServerFixture, _ app: Flow.AppCredentials, _ device: String, level: String) async throws -> TestResponse {
        let challenge = try await Attest.challenge(server, app, "pay", device)
        let nonce = try #require(challenge.json?["nonce"] as? String)
        let payload = try Attest.solve(challenge)
        let verdict: [String: Any] = [
            "requestDetails": [
                "requestPackageName": "com.example.shop", "timestampMillis": String(Int64(Date().timeIntervalSince1970 * 1000)), "nonce": nonce,
            ],
            "appIntegrity": [
                "appRecognitionVerdict": "PLAY_RECOGNIZED", "packageName": "com.example.shop",
                "certificateSha256Digest": ["9lD7Dz3AjKHi2Cz4hAT3iiRVsivz3cRi-Bq6j7sZcxE"],
            ],
            "deviceIntegrity": ["deviceRecognitionVerdict": ["MEETS_BASIC_INTEGRITY", level]],
        ]
        let signed = JWSSigningKey.es256(kid: "play", key: signing).sign(
            payload: Array(try JSONSerialization.data(withJSONObject: verdict)),
            type: "JWT"
        )
        let token = try #require(CompactJWE.encrypt(Array(signed.utf8), key: aes))
        return try await Flow.sdk(
            server,
            app,
            "/v1/attest/tokens",
            #"{"attestId":"pay","deviceId":"\#(device)","payload":"\#(payload)","nonce":"\#(nonce)","integrityToken":"\#(token)"}"#
        )
    }

    /// The gate's refusal reason for a request to the route with `token`, nil when it opens.
    private func gateReason(_ server: ServerFixture, _ app: Flow.AppCredentials, token: String) async throws -> String? {
        let answer = try await server.send(
            .get,
            "/v1/gate/verify",
            headers: [
                HTTPField.Name("X-Original-Method")!: "GET", HTTPField.Name("X-Original-URI")!: "/api/pay/orders",
                HTTPField.Name("X-Gatehouse-Authorization")!: app.backend[.authorization]!, HTTPField.Name("EO-Attest-Token")!: token,
            ]
        )
        if answer.status == .noContent { return nil }
        return answer.headers[HTTPField.Name("X-Gatehouse-Attest-Reason")!] ?? "\(answer.status)"
    }
}
