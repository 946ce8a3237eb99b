import Foundation
import GatehouseAPI
import HTTPTypes
import OpenAPIRuntime

/// What a Gatehouse call can fail with, beyond the transport: the server's problem, as it sent it.
public enum GatehouseClientError: Error, Sendable, Equatable {
    /// The server answered with `application/problem+json`; `code` is the stable reason.
    case problem(Components.Schemas.Problem)
    /// The server answered with a status this client did not expect and no problem body.
    case unexpectedStatus(Int)
    /// An SDK endpoint refused: the SDK's numeric `code` (docs/sdk-protocol.md), a stable reason, a message.
    case sdk(code: Int, reason: String, message: String)
    /// The object-storage endpoints refused, in the OSS SDKs' shape (docs/sts.md).
    case storage(statusCode: Int, errorCode: String, message: String)
    /// A call needs `start()` first.
    case notStarted
    /// The proof-of-work could not be solved, or the challenge was not one this client knows.
    case unsolvableChallenge
    /// The attester asks for the slider captcha first; show `captchaPage` (relative to the server's
    /// base URL) and pass the pass token to `attest(attestID:captchaPassToken:)`.
    case captchaRequired(captchaPage: String)
    /// The attester requires a hardware-attested device and this client has no App Attest service
    /// (`Configuration.appAttest`).
    case hardwareAttestationUnavailable
}

/// Turns every problem response into `GatehouseClientError.problem` before the generated client sees
/// it, so each call has one success path and one error type.
struct ProblemMiddleware: ClientMiddleware {
    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, responseBody) = try await next(request, body, baseURL)
        guard response.status.kind != .successful else { return (response, responseBody) }
        if response.headerFields[.contentType]?.hasPrefix("application/problem+json") == true, let responseBody {
            let data = try await Data(collecting: responseBody, upTo: 1 << 20)
            if let problem = try? JSONDecoder().decode(Components.Schemas.Problem.self, from: data) {
                throw GatehouseClientError.problem(problem)
            }
        }
        throw GatehouseClientError.unexpectedStatus(response.status.code)
    }
}

/// Adds a fixed `Authorization` header to every request.
struct AuthorizationMiddleware: ClientMiddleware {
    let value: String

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        var request = request
        request.headerFields[.authorization] = value
        return try await next(request, body, baseURL)
    }
}

/// Runs a generated-client call, unwrapping the runtime's `ClientError` so callers see our error.
func unwrapping<T>(_ call: () async throws -> T) async throws -> T {
    do {
        return try await call()
    } catch let error as ClientError {
        if let gatehouse = error.underlyingError as? GatehouseClientError { throw gatehouse }
        throw error
    }
}
