import AsyncHTTPClient
import Foundation
import GatehouseCore
import GatehouseOperations
import NIOCore
import NIOHTTP1
import NIOPosix

#if canImport(Glibc)
import Glibc
#endif

/// Sends `AssumeRole` calls: a timeout per attempt, and timeouts, connection failures and 5xx
/// retried with doubling backoff before the failure is reported. 4xx answers are final. Redirects
/// are never followed (a redirect would carry a signed request somewhere the operator did not
/// name), and the endpoint is checked before every call, its name resolved, so that a role stored
/// earlier, or a public name that resolves inward, cannot reach an internal address.
public struct STSClient: STSUpstream {
    /// One client for the process, never shut down: redirects off, unlike `HTTPClient.shared`.
    static let upstream = HTTPClient(
        eventLoopGroup: HTTPClient.defaultEventLoopGroup,
        configuration: HTTPClient.Configuration(redirectConfiguration: .disallow)
    )

    let client: HTTPClient
    let timeout: TimeAmount
    let attempts: Int
    let firstBackoff: Duration
    /// `GATEHOUSE_STS_PRIVATE_ENDPOINTS`.
    public let allowInternalEndpoints: Bool

    public init(
        allowInternalEndpoints: Bool,
        timeout: TimeAmount = .seconds(5),
        attempts: Int = 3,
        firstBackoff: Duration = .milliseconds(200)
    ) {
        self.client = Self.upstream
        self.allowInternalEndpoints = allowInternalEndpoints
        self.timeout = timeout
        self.attempts = attempts
        self.firstBackoff = firstBackoff
    }

    /// The largest answer read; an STS answer is a few kilobytes.
    static let longestAnswer = 256 * 1024

    public func assumeRole(_ call: AssumeRoleCall, provider: STSProvider) async -> Result<TemporaryCredentials, UpstreamFailure> {
        if let refusal = await endpointRefusal(call.url) { return .failure(.refused(status: 0, code: "EndpointNotAllowed: \(refusal)")) }
        var backoff = firstBackoff
        var outcome: Result<TemporaryCredentials, UpstreamFailure> = .failure(.unavailable("not attempted"))
        for attempt in 1...max(1, attempts) {
            outcome = await once(call, provider: provider)
            guard case .failure(let failure) = outcome, failure.retryable, attempt < attempts else { return outcome }
            try? await Task.sleep(for: backoff)
            backoff *= 2
        }
        return outcome
    }

    private func once(_ call: AssumeRoleCall, provider: STSProvider) async -> Result<TemporaryCredentials, UpstreamFailure> {
        var request = HTTPClientRequest(url: call.url)
        request.method = .POST
        for (name, value) in call.headers { request.headers.add(name: name, value: value) }
        request.body = .bytes(ByteBuffer(string: call.body))
        do {
            let response = try await client.execute(request, timeout: timeout)
            let body = try await response.body.collect(upTo: Self.longestAnswer)
            let text = String(buffer: body)
            switch provider {
            case .aws: return AssumeRole.readAWS(status: Int(response.status.code), body: text)
            case .alibaba: return AssumeRole.readAlibaba(status: Int(response.status.code), body: text)
            }
        } catch let error as HTTPClientError where error == .deadlineExceeded || error == .readTimeout || error == .connectTimeout {
            return .failure(.unavailable("timed out"))
        } catch let error as NIOTooManyBytesError {
            return .failure(.garbled("answer over \(Self.longestAnswer) bytes (\(error))"))
        } catch {
            return .failure(.unavailable("unreachable (\(type(of: error)))"))
        }
    }

    private func endpointRefusal(_ url: String) async -> String? {
        await Self.endpointRefusal(url, allowInternal: allowInternalEndpoints)
    }

    /// Why `url` may not be called now (`UpstreamEndpoint`'s rule, its name resolved now), or nil. Play
    /// Integrity's decode and token endpoints are held to the same rule.
    static func endpointRefusal(_ url: String, allowInternal allowInternalEndpoints: Bool) async -> String? {
        if let refusal = UpstreamEndpoint.refusal(url, allowInternal: allowInternalEndpoints) { return refusal }
        guard !allowInternalEndpoints, let host = URLComponents(string: url)?.host, IPAddress(host) == nil else { return nil }
        let addresses = (try? await NIOThreadPool.singleton.runIfActive { Self.resolve(host) }) ?? []
        if addresses.contains(where: UpstreamEndpoint.isInternal) { return "\(host) resolves to an internal address" }
        return nil
    }

    /// The addresses `host` resolves to, by the system resolver (blocking: run off the event loops).
    static func resolve(_ host: String) -> [IPAddress] {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, nil, &hints, &list) == 0, let first = list else { return [] }
        defer { freeaddrinfo(first) }
        var addresses: [IPAddress] = []
        var next: UnsafeMutablePointer<addrinfo>? = first
        while let entry = next {
            var text = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
            if entry.pointee.ai_family == AF_INET, let address = entry.pointee.ai_addr {
                address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { socket in
                    var bytes = socket.pointee.sin_addr
                    _ = inet_ntop(AF_INET, &bytes, &text, socklen_t(text.count))
                }
            } else if entry.pointee.ai_family == AF_INET6, let address = entry.pointee.ai_addr {
                address.withMemoryRebound(to: sockaddr_in6.self, capacity: 1) { socket in
                    var bytes = socket.pointee.sin6_addr
                    _ = inet_ntop(AF_INET6, &bytes, &text, socklen_t(text.count))
                }
            }
            if let parsed = IPAddress(String(cString: text)) { addresses.append(parsed) }
            next = entry.pointee.ai_next
        }
        return addresses
    }
}
