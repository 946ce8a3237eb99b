import AsyncHTTPClient
import Foundation
import GatehouseCore
import NIOCore
import NIOHTTP1

/// Sends `AssumeRole` calls: a timeout per attempt, and timeouts, connection failures and 5xx
/// retried with doubling backoff before the failure is reported. 4xx answers are final.
public struct STSClient: Sendable {
    let client: HTTPClient
    let timeout: TimeAmount
    let attempts: Int
    let firstBackoff: Duration

    public init(client: HTTPClient = .shared, timeout: TimeAmount = .seconds(5), attempts: Int = 3, firstBackoff: Duration = .milliseconds(200)) {
        self.client = client
        self.timeout = timeout
        self.attempts = attempts
        self.firstBackoff = firstBackoff
    }

    /// The largest answer read; an STS answer is a few kilobytes.
    static let longestAnswer = 256 * 1024

    public func assumeRole(_ call: AssumeRoleCall, provider: STSProvider) async -> Result<TemporaryCredentials, UpstreamFailure> {
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
}
