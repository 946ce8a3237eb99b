import HTTPTypes
import Hummingbird

/// Every 503 tells the client when to try again, whichever error vocabulary produced it (a problem,
/// the SDK's -8, the captcha's or STS's shape): the database did not answer in time, or the
/// instance shed the request. Outermost, so it sees the response every other layer settled on.
///
/// A request with a body that was shed or timed out also ends its connection: its body may not have
/// been read, and the server would otherwise wait for the rest of a body that a slow client may never
/// finish, past every timeout. A request without a body keeps its connection: under a flood of them,
/// closing would turn every shed answer into a reconnection, which costs the server more than the
/// answer did. (A 413 keeps its connection too: its client has already sent the body limit's worth at
/// full speed, and clients commonly reuse the connection.)
struct RetryAfterMiddleware: RouterMiddleware {
    typealias Context = GatehouseRequestContext
    static let seconds = "2"
    static let endsConnection: Set<HTTPResponse.Status> = [.serviceUnavailable, .requestTimeout]

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response = try await next(request, context)
        if response.status == .serviceUnavailable && response.headers.value(.retryAfter) == nil {
            response.headers[.retryAfter] = Self.seconds
        }
        if Self.endsConnection.contains(response.status) && Self.hasBody(request.headers) {
            response.headers[.connection] = "close"
            context.channel.close(mode: .input, promise: nil)
        }
        return response
    }

    static func hasBody(_ headers: HTTPFields) -> Bool {
        headers.value(.transferEncoding) != nil || (headers.value(.contentLength).map { $0 != "0" } ?? false)
    }
}
