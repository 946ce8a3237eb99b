import Foundation
import GatehouseTestSupport

/// Real third-party peers started from the tests: Debian's nginx (auth_request in front of an app's
/// API) and moto's server (AWS STS and S3 with authentication on). CI installs both and sets
/// GATEHOUSE_REQUIRE_PEERS=1, so a missing peer fails there instead of skipping.
enum Peers {
    static let nginx = "/usr/sbin/nginx"
    static let repository = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static var required: Bool { ProcessInfo.processInfo.environment["GATEHOUSE_REQUIRE_PEERS"] == "1" }
    static var nginxAvailable: Bool { FileManager.default.isExecutableFile(atPath: nginx) }
    static var motoAvailable: Bool { (try? python(["-c", "import moto.server, boto3"]))?.status == 0 }
    static var available: Bool { required || (nginxAvailable && motoAvailable) }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw Failure(description: "no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Runs a command to its end: its status, standard output and standard error.
    @discardableResult
    static func run(
        _ executable: String,
        _ arguments: [String],
        environment: [String: String] = [:]
    ) throws -> (
        status: Int32, output: String, errors: String
    ) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.currentDirectoryURL = repository
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // The commands run here say little; reading one pipe to its end before the other cannot stall.
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        let complained = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: printed, as: UTF8.self), String(decoding: complained, as: UTF8.self))
    }

    /// The output of a command that must succeed.
    @discardableResult
    static func expectSuccess(_ result: (status: Int32, output: String, errors: String), _ what: String) throws -> String {
        guard result.status == 0 else { throw Failure(description: "\(what) failed (\(result.status)): \(result.output)\(result.errors)") }
        return result.output
    }

    /// A long-running peer, its output sent to `log` (or discarded); stop it with `stop(_:)`.
    static func background(_ executable: String, _ arguments: [String], environment: [String: String] = [:], log: URL? = nil) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.currentDirectoryURL = repository
        if let log {
            _ = FileManager.default.createFile(atPath: log.path, contents: nil)
            let handle = try FileHandle(forWritingTo: log)
            process.standardOutput = handle
            process.standardError = handle
        } else {
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
        }
        try process.run()
        return process
    }

    static func stop(_ process: Process, signal: Int32 = SIGKILL) {
        kill(process.processIdentifier, signal)
        process.waitUntilExit()
    }

    static func python(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, output: String, errors: String) {
        try run("/usr/bin/env", ["python3"] + arguments, environment: environment)
    }

    /// Waits until something accepts connections on `port`.
    static func waitForPort(_ port: Int) async throws {
        for _ in 0..<150 {
            if (try? RawConnection(port: port)) != nil { return }
            try await Task.sleep(for: .milliseconds(100))
        }
        throw Failure(description: "nothing listens on \(port)")
    }

    /// nginx with the shipped files: deploy/nginx/gatehouse-gate.conf in front of `appAPI`, gated by
    /// the Gatehouse `instances` (round robin), and deploy/nginx/gatehouse-proxy.conf serving those
    /// instances' own API. `body` gets the gate's URL and the proxy's.
    static func withNginx(gatehouse instances: [URL], appAPI: URL, credentials: String, _ body: (URL, URL) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("gatehouse-nginx-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("logs"), withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let gatePort = try freePort()
        let proxyPort = try freePort()
        let root = directory.path
        let upstreams = instances.map { "server \($0.host!):\($0.port!);" }.joined(separator: " ")
        let conf = """
            worker_processes 1;
            pid \(root)/nginx.pid;
            error_log \(root)/logs/error.log warn;
            events { worker_connections 64; }
            http {
                access_log \(root)/logs/access.log;
                client_body_temp_path \(root)/body; proxy_temp_path \(root)/proxy;
                fastcgi_temp_path \(root)/fastcgi; uwsgi_temp_path \(root)/uwsgi; scgi_temp_path \(root)/scgi;
                upstream gatehouse { \(upstreams) keepalive 8; keepalive_timeout 10s; }
                upstream app_api { server \(appAPI.host!):\(appAPI.port!); }
                server {
                    listen 127.0.0.1:\(gatePort);
                    set $gatehouse_gate_credentials "\(credentials)";
                    include \(repository.path)/deploy/nginx/gatehouse-gate.conf;
                }
                server {
                    listen 127.0.0.1:\(proxyPort);
                    include \(repository.path)/deploy/nginx/gatehouse-proxy.conf;
                }
            }
            """
        let path = directory.appendingPathComponent("nginx.conf").path
        try conf.write(toFile: path, atomically: true, encoding: .utf8)
        // In the foreground: a daemonised nginx would inherit and hold any pipe of ours open.
        let server = try background(nginx, ["-p", root, "-c", path, "-g", "daemon off;"])
        defer { stop(server, signal: SIGTERM) }
        try await waitForPort(gatePort)
        try await waitForPort(proxyPort)
        try await body(URL(string: "http://127.0.0.1:\(gatePort)")!, URL(string: "http://127.0.0.1:\(proxyPort)")!)
    }

    /// moto's server with authentication on after the set-up calls of tests/interop/sts_interop.py
    /// (a user with a key, a role trusting it that may write `photos/users/*`, the bucket `photos`).
    /// `body` gets moto's URL, the user's key pair and the role's ARN.
    static func withMoto(_ body: (URL, String, String, String) async throws -> Void) async throws {
        let port = try freePort()
        let server = try background(
            "/usr/bin/env",
            ["python3", "-m", "moto.server", "-H", "127.0.0.1", "-p", String(port)],
            environment: ["INITIAL_NO_AUTH_ACTION_COUNT": "6"]
        )
        defer { stop(server) }
        try await waitForPort(port)
        let url = URL(string: "http://127.0.0.1:\(port)")!
        let setup = try python([
            "-c",
            "import json, sys; sys.path.insert(0, 'tests/interop'); from sts_interop import setup_moto; print(json.dumps(setup_moto(sys.argv[1])))",
            url.absoluteString,
        ])
        guard setup.status == 0, let line = setup.output.split(separator: "\n").last,
            let values = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String], values.count == 3
        else { throw Failure(description: "moto set-up failed: \(setup.output)\(setup.errors)") }
        try await body(url, values[0], values[1], values[2])
    }
}
