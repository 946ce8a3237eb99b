import Crypto
import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseTestSupport
import HTTPTypes
import Testing

/// Client attestation over loopback HTTP on both stores: challenges, refusals, adaptive work, and
/// signing-key rotation against a fixed clock.
@Suite struct AttestationFlowTests {
    typealias Flow = DeviceRiskFlowTests

    static func challenge(
        _ server: ServerFixture,
        _ app: Flow.AppCredentials,
        _ attestID: String,
        _ device: String
    ) async throws -> TestResponse {
        try await Flow.sdk(server, app, "/v1/attest/challenges", #"{"attestId":"\#(attestID)","deviceId":"\#(device)"}"#)
    }

    /// Solves a classic challenge by brute force, as a widget would, and returns the widget payload.
    static func solve(_ answer: TestResponse) throws -> String {
        let challenge = try #require(try answer.decoded(Components.Schemas.AttestChallengeResponse.self).challenge)
        let salt = try #require(challenge.salt)
        let target = try #require(challenge.challenge)
        let maxNumber = try #require(challenge.maxnumber)
        let number = try #require((0...maxNumber).first { Hex.encode(SHA256.hash(data: Array((salt + String($0)).utf8))) == target })
        let json =
            #"{"algorithm":"SHA-256","challenge":"\#(target)","number":\#(number),"salt":"\#(salt)","signature":"\#(challenge.signature)"}"#
        return Data(json.utf8).base64EncodedString()
    }

    static func redeem(
        _ server: ServerFixture,
        _ app: Flow.AppCredentials,
        _ attestID: String,
        _ device: String,
        _ payload: String
    ) async throws -> TestResponse {
        try await Flow.sdk(server, app, "/v1/attest/tokens", #"{"attestId":"\#(attestID)","deviceId":"\#(device)","payload":"\#(payload)"}"#)
    }

    @Test(arguments: TestStoreKind.available)
    func refusalsAreSpecificAndRiskyDevicesWorkHarder(kind: TestStoreKind) async throws {
        let clock = FixedClock(Date())
        try await withServer(kind, clock: clock) { server in
            let app = try await Flow.createApp(server)
            let device = try await Flow.startDevice(server, app)
            let created = try await server.send(
                .post,
                "/v1/admin/apps/\(app.appKey)/attesters",
                body: #"{"attestId":"login-pow","pow":{"maxNumber":1000},"challengeLifetimeSeconds":60}"#
            )
            #expect(created.status == .created)
            let duplicate = try await server.send(.post, "/v1/admin/apps/\(app.appKey)/attesters", body: #"{"attestId":"login-pow"}"#)
            #expect(duplicate.status == .conflict && duplicate.problem?.code == "attester_exists")
            let badLifetime = try await server.send(
                .post,
                "/v1/admin/apps/\(app.appKey)/attesters",
                body: #"{"attestId":"x-long","tokenLifetimeSeconds":59}"#
            )
            #expect(badLifetime.status == .badRequest)

            let unknown = try await Self.challenge(server, app, "nope", device)
            #expect(unknown.status == .badRequest && unknown.sdkRefusal?.reason == "attester_not_found")

            let quiet = try await Self.challenge(server, app, "login-pow", device)
            #expect(quiet.read(Components.Schemas.AttestChallengeResponse.self)?.level == 0)
            let payload = try Self.solve(quiet)

            // A tampered signature, a wrong number, then the real solution once.
            var tampered = try #require(JSONSerialization.jsonObject(with: Data(base64Encoded: payload)!) as? [String: Any])
            tampered["signature"] = String(repeating: "0", count: 64)
            let tamperedPayload = try JSONSerialization.data(withJSONObject: tampered).base64EncodedString()
            #expect(try await Self.redeem(server, app, "login-pow", device, tamperedPayload).sdkRefusal?.reason == "challenge_tampered")
            #expect(try await Self.redeem(server, app, "login-pow", device, "not base64!").sdkRefusal?.reason == "invalid_pow_payload")
            let issued = try await Self.redeem(server, app, "login-pow", device, payload)
            #expect(issued.status == .ok && issued.read(Components.Schemas.AttestTokenResponse.self)?.tokenHeader == "EO-Attest-Token")
            #expect(try await Self.redeem(server, app, "login-pow", device, payload).sdkRefusal?.reason == "solution_reused")

            // Expired challenge.
            let late = try Self.solve(try await Self.challenge(server, app, "login-pow", device))
            clock.advance(by: 61)
            #expect(try await Self.redeem(server, app, "login-pow", device, late).sdkRefusal?.reason == "challenge_expired")

            // A deny-listed device pays 64 times the work.
            let denied = try await server.send(
                .post,
                "/v1/admin/apps/\(app.appKey)/risk/lists",
                body: #"{"list":"deny","type":"device","value":"\#(device)"}"#
            )
            #expect(denied.status == .created)
            let risky = try await Self.challenge(server, app, "login-pow", device)
            let riskyChallenge = try risky.decoded(Components.Schemas.AttestChallengeResponse.self)
            #expect(riskyChallenge.level == 3 && riskyChallenge.challenge?.maxnumber == 64_000)

            // Disabled attesters hand out nothing; the change is audited.
            let disabled = try await server.send(.patch, "/v1/admin/apps/\(app.appKey)/attesters/login-pow", body: #"{"status":"disabled"}"#)
            #expect(disabled.status == .ok)
            #expect(try await Self.challenge(server, app, "login-pow", device).sdkRefusal?.reason == "attester_disabled")
            let actions = try await server.send(.get, "/v1/admin/audit").decoded(Components.Schemas.AuditPage.self).items.map(\.action)
            #expect(actions.contains("attester.create") && actions.contains("attester.update"))
        }
    }

    @Test(arguments: TestStoreKind.available)
    func rotationKeepsLiveTokensVerifiableAndRetiresKeysAfterTheirLastToken(kind: TestStoreKind) async throws {
        let clock = FixedClock(Date())
        try await withServer(kind, clock: clock) { server in
            let app = try await Flow.createApp(server)
            let device = try await Flow.startDevice(server, app)
            _ = try await server.send(.post, "/v1/admin/apps/\(app.appKey)/attesters", body: #"{"attestId":"login-pow","pow":{"maxNumber":1000}}"#)
            func token() async throws -> String {
                let payload = try Self.solve(try await Self.challenge(server, app, "login-pow", device))
                return try await Self.redeem(server, app, "login-pow", device, payload).decoded(Components.Schemas.AttestTokenResponse.self).token
            }
            func kid(_ token: String) throws -> String {
                let header = try #require(Base64URL.decode(String(token.split(separator: ".")[0])))
                return try #require((try JSONSerialization.jsonObject(with: Data(header)) as? [String: Any])?["kid"] as? String)
            }
            func jwksKids() async throws -> [String] {
                try await server.send(.get, "/.well-known/jwks.json").decoded(Components.Schemas.Jwks.self).keys.map(\.kid)
            }
            func active(_ token: String) async throws -> Bool {
                try await server.send(.post, "/v1/attest/introspect", headers: app.backend, body: #"{"token":"\#(token)"}"#)
                    .decoded(Components.Schemas.IntrospectResponse.self).active
            }
            let before = try await token()
            let rotated = try await server.send(.post, "/v1/admin/signing-keys/rotate")
            let newKid = try rotated.decoded(Components.Schemas.SigningKeyInfo.self).kid
            #expect(try await active(before))
            #expect(Set(try await jwksKids()) == [try kid(before), newKid])
            let after = try await token()
            #expect(try kid(after) == newKid)

            clock.advance(by: SigningKey.retiredKeyPublication + 1)
            #expect(try await jwksKids() == [newKid])
            let keys = try await server.send(.get, "/v1/admin/signing-keys")
            #expect(keys.read(Components.Schemas.SigningKeyList.self)?.items.count == 1)
        }
    }
}
