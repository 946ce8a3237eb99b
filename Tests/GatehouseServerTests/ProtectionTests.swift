import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseOperations
import GatehouseServer
import GatehouseTestSupport
import HTTPTypes
import Testing

/// What an attack run found open, over loopback HTTP against the built application on both stores:
/// other spellings of a path, the gate's credential in a header the client controls, and proof of
/// work tried many times against one challenge.
@Suite struct ProtectionTests {
    typealias Flow = DeviceRiskFlowTests

    static let spellings = [
        "//v1/admin/apps", "/v1//admin/apps", "/v1/admin//apps", "/v1/admin/apps/", "/v1/./admin/apps", "/v1/x/../admin/apps",
        "/v1/%61dmin/apps", "/v1%2Fadmin/apps", "/v1/admin/apps;x", "/v1/admin/apps%2F", "/V1/admin/apps",
    ]

    @Test(arguments: TestStoreKind.available)
    func otherSpellingsOfAPathAreRefusedBeforeRouting(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            for path in Self.spellings {
                for headers: HTTPFields in [[:], server.admin] {
                    for method: HTTPRequest.Method in [.get, .post] {
                        let answer = try await server.send(method, path, headers: headers, body: method == .post ? "{}" : nil)
                        #expect((400..<500).contains(answer.status.code), "\(method) \(path) answered \(answer.status.code)")
                    }
                }
                let anonymous = try await server.send(.get, path, headers: [:])
                if path.hasPrefix("/v1/") && !path.hasPrefix("/V1") {
                    #expect(anonymous.problem?.code == "non_canonical_path", "\(path)")
                }
            }
            // The canonical spelling still needs its credential, and works with it.
            #expect(try await server.send(.get, "/v1/admin/apps", headers: [:]).status == .unauthorized)
            #expect(try await server.send(.get, "/v1/admin/apps").status == .ok)
            #expect(try await server.send(.get, "/health/live", headers: [:]).status == .ok)
        }
    }

    @Test(arguments: TestStoreKind.available)
    func theGateReadsItsCredentialFromTheOneConfiguredHeader(kind: TestStoreKind) async throws {
        for configured in ["X-Gatehouse-Authorization", "Authorization"] {
            let header: @Sendable (inout GatehouseConfiguration) -> Void = { $0.gateCredentialHeader = configured }
            try await withServer(kind, configure: header) { server in
                let app = try await Flow.createApp(server)
                let other = try await Flow.createApp(server)
                let original: HTTPFields = [
                    HTTPField.Name("X-Original-Method")!: "GET", HTTPField.Name("X-Original-URI")!: "/api/pay",
                ]
                let credential = try #require(app.backend[.authorization])
                let unconfigured = configured == "Authorization" ? "X-Gatehouse-Authorization" : "Authorization"

                var right = original
                right[HTTPField.Name(configured)!] = credential
                #expect(try await server.send(.get, "/v1/gate/verify", headers: right).status == .noContent)

                var elsewhere = original
                elsewhere[HTTPField.Name(unconfigured)!] = credential
                let refused = try await server.send(.get, "/v1/gate/verify", headers: elsewhere)
                #expect(refused.status == .unauthorized, "\(configured): a credential in \(unconfigured) counted")

                // The proxy set the configured header; a client's copy in the other one changes nothing.
                let gated = try await server.send(
                    .post,
                    "/v1/admin/apps/\(app.appKey)/attesters",
                    body: #"{"attestId":"pay-pow","routes":[{"method":"GET","pathPrefix":"/api/"}]}"#
                )
                #expect(gated.status == .created)
                var both = right
                both[HTTPField.Name(unconfigured)!] = try #require(other.backend[.authorization])
                let judged = try await server.send(.get, "/v1/gate/verify", headers: both)
                #expect(judged.status == .unauthorized && judged.headers[HTTPField.Name("EO-Attest-Challenge")!] == "pay-pow")

                // HEAD is gated as GET, and the prefix is compared without case.
                for (method, uri) in [("HEAD", "/api/pay"), ("GET", "/API/pay"), ("GET", "/api;x/pay"), ("GET", "/x/..;/api/pay")] {
                    var variant = right
                    variant[HTTPField.Name("X-Original-Method")!] = method
                    variant[HTTPField.Name("X-Original-URI")!] = uri
                    let answer = try await server.send(.get, "/v1/gate/verify", headers: variant)
                    #expect(answer.status == .unauthorized, "\(method) \(uri) was not gated")
                }
            }
        }
    }

    @Test(arguments: TestStoreKind.available)
    func aChallengeIsTriedOnceWhateverTheOutcome(kind: TestStoreKind) async throws {
        try await withServer(kind) { server in
            let app = try await Flow.createApp(server)
            let device = try await Flow.startDevice(server, app)
            let created = try await server.send(
                .post,
                "/v1/admin/apps/\(app.appKey)/attesters",
                body: #"{"attestId":"login-pow","pow":{"maxNumber":1000}}"#
            )
            #expect(created.status == .created)
            let issued = try await AttestationFlowTests.challenge(server, app, "login-pow", device)
            let payload = try AttestationFlowTests.solve(issued)
            var wrong = try #require(JSONSerialization.jsonObject(with: Data(base64Encoded: payload)!) as? [String: Any])
            wrong["number"] = (wrong["number"] as! Int) + 1
            let wrongPayload = try JSONSerialization.data(withJSONObject: wrong).base64EncodedString()
            let first = try await AttestationFlowTests.redeem(server, app, "login-pow", device, wrongPayload)
            #expect(first.sdkRefusal?.reason == "wrong_solution")
            // The right number for the same challenge is too late: the server searches nothing for anyone.
            let second = try await AttestationFlowTests.redeem(server, app, "login-pow", device, payload)
            #expect(second.sdkRefusal?.reason == "solution_reused")

            let tooCostly = try await server.send(
                .post,
                "/v1/admin/apps/\(app.appKey)/attesters",
                body: #"{"attestId":"v2-pow","pow":{"format":"altcha-v2","cost":50001}}"#
            )
            #expect(tooCostly.status == .badRequest && tooCostly.problem?.field == "pow.cost")
        }
    }

    @Test(arguments: TestStoreKind.available)
    func rolesCallOnlyPublicHTTPSUnlessAnInternalSTSIsConfigured(kind: TestStoreKind) async throws {
        let publicOnly: @Sendable (inout GatehouseConfiguration) -> Void = { $0.stsPrivateEndpoints = false }
        try await withServer(kind, configure: publicOnly) { server in
            let app = try await Flow.createApp(server)
            let inward = [
                "http://sts.amazonaws.com", "https://127.0.0.1", "https://10.1.2.3:8443", "https://169.254.169.254", "https://[::1]",
                "https://[fd00::1]", "https://localhost", "https://sts.internal", "https://metadata", "ftp://sts.amazonaws.com",
            ]
            for (index, endpoint) in inward.enumerated() {
                let body = STSRoleFlowTests.roleBody("role-\(index)").replacingOccurrences(of: "http://127.0.0.1:5000", with: endpoint)
                let refused = try await server.send(.post, "/v1/admin/apps/\(app.appKey)/roles", body: body)
                #expect(refused.status == .badRequest && refused.problem?.field == "stsEndpoint", "\(endpoint): \(refused.json ?? [:])")
            }
            let body = STSRoleFlowTests.roleBody("public").replacingOccurrences(of: "http://127.0.0.1:5000", with: "https://sts.amazonaws.com")
            #expect(try await server.send(.post, "/v1/admin/apps/\(app.appKey)/roles", body: body).status == .created)
            let moved = try await server.send(.patch, "/v1/admin/apps/\(app.appKey)/roles/public", body: #"{"stsEndpoint":"https://192.168.1.1"}"#)
            #expect(moved.status == .badRequest && moved.problem?.field == "stsEndpoint")
        }
    }
}
