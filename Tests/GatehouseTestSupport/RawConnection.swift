import Foundation

#if canImport(Glibc)
import Glibc
#endif

/// A loopback TCP connection for tests that speak HTTP/1.1 by hand (a body that stops half-way, a
/// request nobody answers), and to find out whether anything listens on a port. A read gives up after
/// a minute without a byte: a guard against a hang, far past any bound a test asserts. Reads poll
/// without blocking: an in-process server shares the test's threads, and a read blocked on one of them
/// could starve the server of the thread it needs to answer.
public final class RawConnection {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    private let descriptor: Int32
    /// The server ended the connection (a read found its end).
    public private(set) var ended = false

    /// Connects to `port` on 127.0.0.1; throws if nothing accepts there.
    public init(port: Int) throws {
        descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        // Thrown with every property set, the connection is deinitialised, which closes the socket.
        guard connected else { throw Failure(description: "cannot connect to \(port)") }
    }

    deinit { close(descriptor) }

    public func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ Glibc.send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }) == bytes.count else {
            throw Failure(description: "send failed")
        }
    }

    /// Everything until the server ends the connection.
    public func readToEnd() async throws -> String {
        var received: [UInt8] = []
        while let chunk = try await readChunk() { received += chunk }
        return String(decoding: received, as: UTF8.self)
    }

    /// One answer: its head and a body of its Content-Length.
    public func readAnswer() async throws -> String {
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
        for _ in 0..<3_000 {
            let count = buffer.withUnsafeMutableBytes { recv(descriptor, $0.baseAddress, $0.count, Int32(MSG_DONTWAIT)) }
            if count == 0 {
                ended = true
                return nil
            }
            if count > 0 { return Array(buffer[..<count]) }
            guard errno == EAGAIN || errno == EWOULDBLOCK else { throw Failure(description: "read failed (errno \(errno))") }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw Failure(description: "no byte within a minute")
    }
}
