import Foundation
import GatehouseOperations
import GatehouseTestSupport
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// The body's deadline, kept by the connection (`BodyDeadlineHandler`), over a raw socket against the
/// built application: a body that stops half-way is answered 408 `body_timeout` and its connection
/// ends; a body nobody reads (a request refused before its body) ends the connection at the deadline
/// instead of holding it; a body that arrives in time is served on a connection that stays open.
@Suite struct BodyDeadlineTests {
    static let oneSecond: @Sendable (inout GatehouseConfiguration) -> Void = { $0.bodyTimeoutSeconds = 1 }
    static let siteverify = "POST /v1/captcha/siteverify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n"

    @Test(arguments: TestStoreKind.available)
    func aBodyThatStopsHalfWayIsAnswered408AndItsConnectionEnds(kind: TestStoreKind) async throws {
        try await withServer(kind, configure: Self.oneSecond) { server in
            let connection = try RawConnection(port: server.client.port!)
            try connection.send(Self.siteverify + "{\"secret\":")
            let answer = try await connection.readToEnd()
            #expect(answer.hasPrefix("HTTP/1.1 408"), "\(answer)")
            #expect(answer.contains("\"body_timeout\""), "\(answer)")
            #expect(connection.ended, "the connection ends after a timed-out body")
        }
    }

    @Test(arguments: TestStoreKind.available)
    func aBodyNobodyReadsEndsItsConnectionAtTheDeadline(kind: TestStoreKind) async throws {
        try await withServer(kind, configure: Self.oneSecond) { server in
            let connection = try RawConnection(port: server.client.port!)
            // No credential: refused before the body is read, and the body never comes.
            try connection.send("POST /v1/risk/query HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n")
            let answer = try await connection.readToEnd()
            #expect(answer.hasPrefix("HTTP/1.1 401"), "\(answer)")
            #expect(connection.ended, "the connection ends instead of waiting for the body")
        }
    }

    @Test(arguments: TestStoreKind.available)
    func aBodyInTimeIsServedAndTheConnectionStaysOpen(kind: TestStoreKind) async throws {
        try await withServer(kind, configure: Self.oneSecond) { server in
            let connection = try RawConnection(port: server.client.port!)
            let body = "{\"secret\":\"x\",\"response\":\"y\"}"
            let request =
                "POST /v1/captcha/siteverify HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n"
            try connection.send(request)
            try await Task.sleep(for: .milliseconds(300))
            try connection.send(body)
            let first = try await connection.readAnswer()
            #expect(!first.hasPrefix("HTTP/1.1 408") && first.hasPrefix("HTTP/1.1 "), "\(first)")
            // Past the first request's deadline, the connection still serves the next one.
            try await Task.sleep(for: .milliseconds(1_500))
            try connection.send("GET /health/live HTTP/1.1\r\nHost: x\r\n\r\n")
            let second = try await connection.readAnswer()
            #expect(second.hasPrefix("HTTP/1.1 200"), "\(second)")
        }
    }
}

/// A loopback TCP connection whose reads give up after 10 s without a byte. Reads poll without
/// blocking: the in-process server shares the test's threads, and a read blocked on one of them
/// could starve the server of the thread it needs to answer.
final class RawConnection {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    private let descriptor: Int32
    private(set) var ended = false

    init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else { throw Failure(description: "cannot connect to \(port)") }
    }

    deinit { close(descriptor) }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count else {
            throw Failure(description: "send failed")
        }
    }

    /// Everything until the server ends the connection (or 10 s without a byte).
    func readToEnd() async throws -> String {
        var received: [UInt8] = []
        while let chunk = try await readChunk() { received += chunk }
        return String(decoding: received, as: UTF8.self)
    }

    /// One answer: its head and a body of its Content-Length.
    func readAnswer() async throws -> String {
        var received: [UInt8] = []
        while true {
            let text = String(decoding: received, as: UTF8.self)
            if let end = text.range(of: "\r\n\r\n") {
                let head = text[..<end.lowerBound].lowercased()
                let length =
                    head.split(separator: "\r\n").first { $0.hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
                if received.count >= text.utf8.distance(from: text.utf8.startIndex, to: end.upperBound) + length { return text }
            }
            guard let chunk = try await readChunk() else { return text }
            received += chunk
        }
    }

    /// Nil at the end of the connection.
    private func readChunk() async throws -> [UInt8]? {
        var buffer = [UInt8](repeating: 0, count: 4096)
        for _ in 0..<500 {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count == 0 {
                ended = true
                return nil
            }
            if count > 0 { return Array(buffer[..<count]) }
            guard errno == EAGAIN || errno == EWOULDBLOCK else { throw Failure(description: "read failed (errno \(errno))") }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw Failure(description: "no byte within 10 s")
    }
}
