import GatehouseCore
import Hummingbird
import NIOCore

/// Per-request state: the peer address, the limits from configuration, and the caller once its
/// audience's guard has admitted it.
public struct GatehouseRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?
    /// The connection, to stop reading a body nobody will read (`RetryAfterMiddleware`).
    let channel: any Channel
    /// Set by `AdminAuthMiddleware` for the operators' routes.
    public var actor: Actor?
    /// Set by `BackendAuthMiddleware` for the backend's and the gateway's routes.
    var backend: BackendCaller?
    /// Set by `ConsoleSessionMiddleware` for the console's pages: the signed-in operator, and the
    /// fields of a form it admitted (read once by the guard, which checks its form token).
    var console: ConsoleCaller?
    var consoleForm: [String: String] = [:]
    /// Set by the SDK's guard for the SDK's routes.
    var sdk: SDKCaller?
    /// Set by `ClientAddressMiddleware`: the client's address after trusted proxies.
    public var clientAddress: String?
    /// Set by `ClientAddressMiddleware`: a trusted proxy says the client came over TLS (the console's
    /// cookie is then `Secure`).
    var forwardedOverTLS = false
    var maxBodyBytes: Int = 65_536
    var bodyTimeout: Duration = .seconds(10)

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
        self.channel = source.channel
    }

    /// The app admitted by the backend or gateway guard. A route outside those groups asking for it
    /// is a programming error, answered 500 rather than served unauthenticated.
    func backendCaller() throws -> BackendCaller {
        guard let backend else { throw Problem.internalError() }
        return backend
    }

    /// The app and body admitted by the SDK guard; as `backendCaller()`, for the SDK's routes only.
    func sdkCaller() throws -> SDKCaller {
        guard let sdk else { throw Problem.internalError() }
        return sdk
    }

    /// A signed SDK request's app, and its body (read once by the guard) decoded as `T`.
    func sdkRequest<T: Decodable>(_ type: T.Type, _ request: Request) throws -> (app: App, input: T) {
        let caller = try sdkCaller()
        return (caller.app, try JSONBody.decode(type, from: caller.body, contentType: request.headers[.contentType]))
    }

    /// The `ChangeOrigin` for audit entries of this request.
    func origin() throws -> ChangeOrigin {
        guard let actor else { throw Problem.internalError() }
        return ChangeOrigin(
            actor: actor,
            requestID: logger[metadataKey: RequestIDMiddleware.metadataKey]?.description,
            sourceAddress: clientAddress
        )
    }
}
