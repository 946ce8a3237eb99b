import GatehouseCore
import HTTPTypes
import Hummingbird
import NIOCore

/// Works out the client's address once, believing `X-Forwarded-For` only from trusted proxies.
struct ClientAddressMiddleware: RouterMiddleware {
    typealias Context = GatehouseRequestContext
    static let forwardedFor = HTTPField.Name("X-Forwarded-For")!
    static let forwardedProto = HTTPField.Name("X-Forwarded-Proto")!

    let trustedProxies: [CIDR]
    let maxBodyBytes: Int
    let bodyTimeout: Duration

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var context = context
        context.maxBodyBytes = maxBodyBytes
        context.bodyTimeout = bodyTimeout
        context.clientAddress = ClientAddress.resolve(
            peer: context.remoteAddress?.ipAddress,
            forwardedFor: request.headers[values: Self.forwardedFor].joined(separator: ","),
            trustedProxies: trustedProxies
        )
        context.forwardedOverTLS = ClientAddress.forwardedOverTLS(
            peer: context.remoteAddress?.ipAddress,
            forwardedProto: request.headers.value(Self.forwardedProto),
            trustedProxies: trustedProxies
        )
        return try await next(request, context)
    }
}
