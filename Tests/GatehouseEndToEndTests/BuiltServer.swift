import AsyncHTTPClient
import Foundation
import GatehouseTestSupport
import NIOCore
import NIOHTTP1

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The built `gatehouse` executable, serving a fresh database on a loopback port, set up the way an
/// operator would: `gatehouse migrate`, `gatehouse admin-token create`, then `gatehouse serve`.
struct BuiltServer: Sendable {
    let baseURL: URL
    let adminToken: String
    let database: TestDatabase

    /// The executable: GATEHOUSE_BINARY, or the `gatehouse` that `swift build` put beside this test
    /// bundle (found upwards from it, which also covers macOS's .xctest bundles).
    static func executable() throws -> String {
        if let path = ProcessInfo.processInfo.environment["GATEHOUSE_BINARY"] { return path }
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        for _ in 0..<5 {
            let candidate = directory.appendingPathComponent("gatehouse").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory.deleteLastPathComponent()
        }
        throw Peers.Failure(description: "no gatehouse executable beside the tests: run `swift build` first or set GATEHOUSE_BINARY")
    }

    /// Runs `body` against the built server on a fresh database of `kind`; stops the server after.
    static func with(
        _ kind: TestStoreKind,
        environment extra: [String: String] = [:],
        _ body: @Sendable (BuiltServer) async throws -> Void
    )
        async throws
    {
        try await with(kind, instances: 1, environment: extra) { try await body($0[0]) }
    }

    /// Runs `body` against `instances` servers sharing one fresh database of `kind` (one master key,
    /// migrated once), as a scaled-out deployment runs them; stops them all after.
    static func with(
        _ kind: TestStoreKind,
        instances: Int,
        environment extra: [String: String] = [:],
        _ body: @Sendable ([BuiltServer]) async throws -> Void
    ) async throws {
        let binary = try executable()
        try await withTestDatabase(kind) { database in
            let scratch = database.scratchDirectory
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            defer { if kind == .postgres { try? FileManager.default.removeItem(at: scratch) } }
            var environment = [
                "GATEHOUSE_MASTER_KEY": Data((0..<32).map { _ in UInt8.random(in: 0...255) }).base64EncodedString(),
                "GATEHOUSE_LOG_LEVEL": "warning",
                // As `testConfiguration`: a test's client keeps its connections and does not reconnect, and
                // under the whole suite's load a pause between its requests passed the 15 s default
                // (ScaleOutTests: "I/O on closed channel", remoteConnectionClosed, 2026-11-27).
                "GATEHOUSE_IDLE_TIMEOUT_SECONDS": "300",
                // moto listens on loopback over plain http.
                "GATEHOUSE_STS_PRIVATE_ENDPOINTS": "true",
            ].merging(extra) { _, given in given }
            switch database.location {
            case .postgres(let url): environment["GATEHOUSE_DATABASE_URL"] = url
            case .sqlite(let path): environment["GATEHOUSE_DATA_DIR"] = URL(fileURLWithPath: path).deletingLastPathComponent().path
            }
            try Peers.expectSuccess(Peers.run(binary, ["migrate"], environment: environment), "gatehouse migrate")
            let adminToken = try Peers.expectSuccess(
                Peers.run(binary, ["admin-token", "create", "--name", "end-to-end"], environment: environment),
                "gatehouse admin-token create"
            )
            .trimmingCharacters(in: .whitespacesAndNewlines)
            var servers: [BuiltServer] = []
            var processes: [Process] = []
            var logs: [URL] = []
            // Gatehouse drains and exits on SIGTERM: stopping it that way tests that too.
            defer { for process in processes { Peers.stop(process, signal: SIGTERM) } }
            for instance in 0..<instances {
                let port = try Peers.freePort()
                let log = scratch.appendingPathComponent("serve-\(instance).log")
                var instanceEnvironment = environment
                instanceEnvironment["GATEHOUSE_PORT"] = String(port)
                processes.append(try Peers.background(binary, ["serve"], environment: instanceEnvironment, log: log))
                logs.append(log)
                servers.append(BuiltServer(baseURL: URL(string: "http://127.0.0.1:\(port)")!, adminToken: adminToken, database: database))
            }
            do {
                for server in servers { try await server.waitUntilReady() }
                try await body(servers)
            } catch {
                let output = logs.map { (try? String(contentsOf: $0, encoding: .utf8)) ?? "" }.joined(separator: "\n---\n")
                throw Peers.Failure(description: "\(error)\n--- gatehouse serve said:\n\(output.suffix(4000))")
            }
        }
    }

    /// This instance's count of requests to a route pattern, from its Prometheus metrics.
    func requestCount(route: String) async throws -> Int {
        let metrics = try await HTTP.send(.GET, baseURL.appendingPathComponent("metrics")).body
        return metrics.split(separator: "\n")
            .filter { $0.hasPrefix("gatehouse_http_requests_total{") && $0.contains("route=\"\(route)\"") }
            .compactMap { Double($0.split(separator: " ").last ?? "") }
            .reduce(0) { $0 + Int($1) }
    }

    private func waitUntilReady() async throws {
        for _ in 0..<200 {
            if (try? await HTTP.send(.GET, baseURL.appendingPathComponent("health/ready")).status) == 200 { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw Peers.Failure(description: "gatehouse serve never became ready at \(baseURL)")
    }

    /// An operator's call to the admin API.
    func admin(_ method: HTTPMethod, _ path: String, _ json: String? = nil) async throws -> HTTP.Answer {
        try await HTTP.send(method, baseURL.appendingPathComponent(path), headers: ["Authorization": "Bearer \(adminToken)"], json: json)
    }
}

/// An app registered through the admin API: what the SDK gets and what the app's backend keeps.
struct RegisteredApp: Sendable {
    let appKey: String
    let secretKey: String
    let serverSecret: String

    var backendCredentials: String { Data("\(appKey):\(serverSecret)".utf8).base64EncodedString() }

    static func create(_ server: BuiltServer, events: [Int] = [3301]) async throws -> RegisteredApp {
        let created = try await server.admin(.POST, "v1/admin/apps", #"{"name":"Shop","platforms":["ios"]}"#)
        guard created.status == 201, let app = created.json?["app"] as? [String: Any], let appKey = app["appKey"] as? String,
            let secretKey = created.json?["secretKey"] as? String, let serverSecret = created.json?["serverSecret"] as? String
        else { throw Peers.Failure(description: "app not created: \(created.body)") }
        for event in events {
            let registered = try await server.admin(.POST, "v1/admin/apps/\(appKey)/events", #"{"eventId":\#(event),"name":"e\#(event)"}"#)
            guard registered.status == 201 else { throw Peers.Failure(description: "event not registered: \(registered.body)") }
        }
        return RegisteredApp(appKey: appKey, secretKey: secretKey, serverSecret: serverSecret)
    }

    /// The app's backend calling Gatehouse (risk queries, signature verification, introspection).
    func backend(_ server: BuiltServer, _ path: String, _ json: String) async throws -> HTTP.Answer {
        try await HTTP.send(.POST, server.baseURL.appendingPathComponent(path), headers: ["Authorization": "Basic \(backendCredentials)"], json: json)
    }
}

/// Plain HTTP for everything that is not the app (operators, the app's backend, probes), over
/// AsyncHTTPClient so that it shares nothing with the client under test.
enum HTTP {
    struct Answer: Sendable {
        let status: Int
        let headers: HTTPHeaders
        let body: String
        var json: [String: Any]? { try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] }
    }

    static func send(_ method: HTTPMethod, _ url: URL, headers: [String: String] = [:], json: String? = nil, body: Data? = nil) async throws -> Answer
    {
        var request = HTTPClientRequest(url: url.absoluteString)
        request.method = method
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let json {
            request.headers.add(name: "Content-Type", value: "application/json")
            request.body = .bytes(ByteBuffer(string: json))
        } else if let body {
            request.body = .bytes(ByteBuffer(bytes: body))
        }
        let response = try await HTTPClient.shared.execute(request, timeout: .seconds(30))
        let bytes = try await response.body.collect(upTo: 1 << 20)
        return Answer(status: Int(response.status.code), headers: response.headers, body: String(buffer: bytes))
    }

    static func send(_ request: URLRequest) async throws -> Answer {
        try await send(
            HTTPMethod(rawValue: request.httpMethod ?? "GET"),
            request.url!,
            headers: request.allHTTPHeaderFields ?? [:],
            body: request.httpBody
        )
    }
}
