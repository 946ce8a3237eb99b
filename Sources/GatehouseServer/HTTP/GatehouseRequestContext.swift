import GatehouseCore
import Hummingbird
import NIOCore

/// Per-request state: the peer address, the limits from configuration, and the operator once the
/// admin middleware has admitted one.
public struct GatehouseRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?
    /// Set by `AdminAuthMiddleware` for `/v1/admin` routes.
    public var actor: Actor?
    /// Set by `ClientAddressMiddleware`: the client's address after trusted proxies.
    public var clientAddress: String?
    var maxBodyBytes: Int = 65_536

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.remoteAddress = source.channel.remoteAddress
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
