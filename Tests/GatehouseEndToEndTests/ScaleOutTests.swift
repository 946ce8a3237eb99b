import Foundation
import GatehouseClient
import GatehouseTestSupport
import Hummingbird
import Testing

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Scaling out: two instances of the built server against one PostgreSQL, behind the shipped nginx
/// files (gatehouse-proxy.conf for Gatehouse's API, gatehouse-gate.conf in front of the app's API),
/// round robin, serve the attestation flow with requests alternating between the instances.
@Suite struct ScaleOutTests {
    static let routes = ["/v1/attest/challenges", "/v1/attest/tokens", "/v1/gate/verify"]

    @Test(.enabled(if: (Peers.required || Peers.nginxAvailable) && TestStoreKind.available.contains(.postgres)))
    func twoInstancesBehindNginxServeTheAttestationFlow() async throws {
        try await BuiltServer.with(.postgres, instances: 2) { instances in
            // Set up on one instance, used through the other: nothing lives in an instance.
            let app = try await RegisteredApp.create(instances[0])
            try await SeedFlowTests.createAttester(
                instances[1],
                app,
                #"{"attestId":"api-pow","pow":{"maxNumber":2000},"adaptive":false,"routes":[{"method":"*","pathPrefix":"/api/"}]}"#
            )
            let hits = SeedFlowTests.Lines()
            let router = Router()
            router.get("api/orders") { _, _ in
                hits.append("orders")
                return "upstream ok"
            }
            try await withLoopbackServer(router) { appAPI in
                try await Peers.withNginx(gatehouse: instances.map(\.baseURL), appAPI: appAPI, credentials: app.backendCredentials) { gate, proxy in
                    for round in 0..<3 {
                        let client = Gatehouse(
                            .init(baseURL: proxy, appKey: app.appKey, secretKey: app.secretKey, clientDeviceID: "scale-out-phone-\(round)")
                        )
                        try await client.start()
                        let (data, response) = try await AttestingSession(gatehouse: client).data(
                            for: URLRequest(url: gate.appendingPathComponent("api/orders"))
                        )
                        #expect(response.statusCode == 200 && String(decoding: data, as: UTF8.self) == "upstream ok")
                        // One extra request through the proxy after the first round: if a round's
                        // requests are even in number, each route would otherwise meet the same instance.
                        if round == 0 { _ = try await HTTP.send(.GET, proxy.appendingPathComponent("health/live")) }
                    }
                }
            }
            #expect(hits.all.count == 3)
            for route in Self.routes {
                var counts: [Int] = []
                for instance in instances { counts.append(try await instance.requestCount(route: route)) }
                #expect(counts.count == 2 && counts.allSatisfy { $0 > 0 }, "\(route) per instance: \(counts)")
            }
        }
    }

    /// A device-minted ztoken presented 64 times at once, half to each instance: exactly one query
    /// consumes it, whichever instance it reaches; the other 63 are replays. Then a burst of distinct
    /// tokens from one device: each consumed once, none lost between the instances.
    @Test(.enabled(if: TestStoreKind.available.contains(.postgres)))
    func twoInstancesConsumeAZTokenExactlyOnce() async throws {
        try await BuiltServer.with(.postgres, instances: 2) { instances in
            let app = try await RegisteredApp.create(instances[0])
            let client = SeedFlowTests.gatehouse(instances[1], app)
            try await client.start()
            let backends = instances.map { SeedFlowTests.backend($0, app) }
            let token = try client.zToken(event: 3301, account: "alice")
            let states = try await withThrowingTaskGroup(of: String.self) { group in
                for query in 0..<64 {
                    group.addTask {
                        try await backends[query % 2].queryRisk(ztoken: token, eventID: 3301, accountID: "alice", clientIP: "127.0.0.1")
                            .tokenState.rawValue
                    }
                }
                return try await group.reduce(into: [String: Int]()) { $0[$1, default: 0] += 1 }
            }
            #expect(states == ["fresh": 1, "replayed": 63], "\(states)")

            let tokens = try (0..<40).map { _ in try client.zToken(event: 3301, account: "alice") }
            let fresh = try await withThrowingTaskGroup(of: Bool.self) { group in
                for (index, minted) in tokens.enumerated() {
                    group.addTask {
                        try await backends[index % 2].queryRisk(ztoken: minted, eventID: 3301, accountID: "alice", clientIP: "127.0.0.1")
                            .tokenState.rawValue == "fresh"
                    }
                }
                return try await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(fresh == 40)
        }
    }
}
