import GatehouseCore
import Hummingbird
import NIOCore

/// Per-request state: the peer address and the limits from configuration. Each audience's group turns
/// it into a context of its own with its caller (`AudienceContexts.swift`).
public struct GatehouseRequestContext: RequestContext, RemoteAddressRequestContext {
    public var coreContext: CoreRequestContextStorage
    public let remoteAddress: SocketAddress?
    /// The connection, to stop reading a body nobody will read (`RetryAfterMiddleware`).
    let channel: any Channel
    /// Set by an audience's guard, and read only by its group's context (`AudienceContexts.swift`).
    var admitted: AdmittedCaller?
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

    /// The console's operator, for a page rendered whatever went wrong (nil before the session guard).
    var consoleCaller: ConsoleCaller? {
        if case .console(let caller, _) = admitted { return caller }
        return nil
    }

    /// The `ChangeOrigin` for audit entries of this request, made by `actor`.
    func origin(of actor: Actor) -> ChangeOrigin {
        ChangeOrigin(actor: actor, requestID: logger[metadataKey: RequestIDMiddleware.metadataKey]?.description, sourceAddress: clientAddress)
    }
}
