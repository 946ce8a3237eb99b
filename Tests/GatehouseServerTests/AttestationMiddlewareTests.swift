import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseHummingbird
import GatehouseTestSupport
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing

/// The in-process gate for Swift backends, against a live Gatehouse's JWKS over loopback.
@Suite struct AttestationMiddlewareTests {
    typealias Flow = DeviceRiskFlowTests

    @Test func theMiddlewareLetsValidBoundTokensThroughAndAnswers428Otherwise() async throws {
        try await withServer(.sqlite) { server in
            let app = try await Flow.createApp(server)
            let device = try await Flow.startDevice(server, app)
            _ = try await server.send(
                .post,
                "/v1/admin/apps/\(app.appKey)/attesters",
                body: #"{"attestId":"login-pow","pow":{"maxNumber":1000},"bindHeader":"Authorization"}"#
            )
            let payload = try AttestationFlowTests.solve(try await AttestationFlowTests.challenge(server, app, "login-pow", device))
            let pay = AttestationToken.binding(of: "Bearer user-1")
            let redeemed = try await Flow.sdk(
                server,
                app,
                "/v1/attest/tokens",
                #"{"attestId":"login-pow","deviceId":"\#(device)","payload":"\#(payload)","pay":"\#(pay)"}"#
            )
            let token = try redeemed.decoded(Components.Schemas.AttestTokenResponse.self).token

            let router = Router()
            router.group("api")
                .add(
                    middleware: AttestationMiddleware(
                        .init(
                            appKey: try AppKey(validating: app.appKey),
                            attestID: try AttestID(validating: "login-pow"),
                            bindHeader: "Authorization"
                        ),
                        jwks: JWKSCache(url: server.baseURL.absoluteString + "/.well-known/jwks.json")
                    )
                )
                .get("data") { _, _ in "protected" }
            // The same attester's token on a group that requires hardware: a PoW token is no hardware.
            router.group("hardware")
                .add(
                    middleware: AttestationMiddleware(
                        .init(
                            appKey: try AppKey(validating: app.appKey),
                            attestID: try AttestID(validating: "login-pow"),
                            bindHeader: "Authorization",
                            requireHardwareAttestation: true
                        ),
                        jwks: JWKSCache(url: server.baseURL.absoluteString + "/.well-known/jwks.json")
                    )
                )
                .get("data") { _, _ in "protected" }
            // In monitor every request goes on, with what the token was.
            router.group("monitored")
                .add(
                    middleware: AttestationMiddleware(
                        .init(
                            appKey: try AppKey(validating: app.appKey),
                            attestID: try AttestID(validating: "login-pow"),
                            bindHeader: "Authorization",
                            enforcement: .monitor
                        ),
                        jwks: JWKSCache(url: server.baseURL.absoluteString + "/.well-known/jwks.json")
                    )
                )
                .get("data") { request, _ in request.headers[HTTPField.Name("X-Gatehouse-Attest-Verdict")!] ?? "none" }
            let backend = Application(router: router)
            try await backend.test(.router) { client in
                let header = HTTPField.Name("EO-Attest-Token")!
                let challenge = HTTPField.Name("EO-Attest-Challenge")!
                let reason = HTTPField.Name("X-Gatehouse-Attest-Reason")!
                let missing = try await client.execute(uri: "/api/data", method: .get)
                #expect(missing.status == .preconditionRequired && missing.headers[challenge] == "login-pow" && missing.headers[reason] == "missing")
                let good = try await client.execute(uri: "/api/data", method: .get, headers: [header: token, .authorization: "Bearer user-1"])
                #expect(good.status == .ok && String(buffer: good.body) == "protected")
                let wrongBinding = try await client.execute(
                    uri: "/api/data",
                    method: .get,
                    headers: [header: token, .authorization: "Bearer user-2"]
                )
                #expect(wrongBinding.status == .preconditionRequired && wrongBinding.headers[reason] == "binding_mismatch")
                let forged = try await client.execute(
                    uri: "/api/data",
                    method: .get,
                    headers: [header: token + "x", .authorization: "Bearer user-1"]
                )
                #expect(forged.status == .preconditionRequired)
                let notHardware = try await client.execute(
                    uri: "/hardware/data",
                    method: .get,
                    headers: [header: token, .authorization: "Bearer user-1"]
                )
                #expect(notHardware.status == .preconditionRequired && notHardware.headers[reason] == "hardware_required")

                let verdict = HTTPField.Name("X-Gatehouse-Attest-Verdict")!
                let spoofed = try await client.execute(uri: "/monitored/data", method: .get, headers: [verdict: "valid"])
                #expect(spoofed.status == .ok && String(buffer: spoofed.body) == "missing" && spoofed.headers[verdict] == "missing")
                let monitoredGood = try await client.execute(
                    uri: "/monitored/data",
                    method: .get,
                    headers: [header: token, .authorization: "Bearer user-1"]
                )
                #expect(String(buffer: monitoredGood.body) == "valid")
                let monitoredBad = try await client.execute(
                    uri: "/monitored/data",
                    method: .get,
                    headers: [header: token, .authorization: "Bearer x"]
                )
                #expect(monitoredBad.status == .ok && String(buffer: monitoredBad.body) == "invalid")
            }
        }
    }
}
