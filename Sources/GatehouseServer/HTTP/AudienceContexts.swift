import GatehouseCore
import Hummingbird

/// What a handler of any audience knows of its request: the connection's facts and limits
/// (`GatehouseRequestContext`, which the probes, the open routes and the console's sign-in use as it is).
protocol GatehouseContext: RequestContext {
    var base: GatehouseRequestContext { get }
}

extension GatehouseRequestContext: GatehouseContext {
    var base: GatehouseRequestContext { self }
}

/// A context made by an audience's router group from the one its guard admitted
/// (`router.group(context:)`): its caller is not optional, so a handler cannot ask for a caller its
/// group does not admit. The guard runs in the same group just before, and is the only writer of
/// `GatehouseRequestContext.admitted`.
protocol AudienceContext: GatehouseContext, ChildRequestContext where ParentContext == GatehouseRequestContext {}

extension AudienceContext {
    var clientAddress: String? { base.clientAddress }
}

/// An operator with a bearer admin token (`/v1/admin/...`).
struct OperatorContext: AudienceContext {
    var coreContext: CoreRequestContextStorage
    let base: GatehouseRequestContext
    let actor: Actor

    init(context: GatehouseRequestContext) throws {
        guard case .operator(let actor) = context.admitted else { throw Problem.internalError() }
        (self.coreContext, self.base, self.actor) = (context.coreContext, context, actor)
    }

    /// The `ChangeOrigin` for audit entries of this request.
    var origin: ChangeOrigin { base.origin(of: actor) }
}

/// The app's backend, or the gateway in front of its API: the app whose credential admitted it.
struct BackendContext: AudienceContext {
    var coreContext: CoreRequestContextStorage
    let base: GatehouseRequestContext

    init(context: GatehouseRequestContext) throws {
        guard case .backend = context.admitted else { throw Problem.internalError() }
        (self.coreContext, self.base) = (context.coreContext, context)
    }

    /// Read from the admitted caller rather than kept twice: `init` checked what it is.
    var caller: BackendCaller {
        guard case .backend(let caller) = base.admitted else { preconditionFailure("a backend context without its caller") }
        return caller
    }

    var app: App { caller.app }
}

/// The mobile SDK: the app whose `secretKey` signed the request, and the body it signed.
struct SDKContext: AudienceContext {
    var coreContext: CoreRequestContextStorage
    let base: GatehouseRequestContext

    init(context: GatehouseRequestContext) throws {
        guard case .sdk = context.admitted else { throw Problem.internalError() }
        (self.coreContext, self.base) = (context.coreContext, context)
    }

    /// Read from the admitted caller rather than kept twice: `init` checked what it is.
    var caller: SDKCaller {
        guard case .sdk(let caller) = base.admitted else { preconditionFailure("an SDK context without its caller") }
        return caller
    }

    var app: App { caller.app }

    /// The signed body decoded as `T`.
    func input<T: Decodable>(_ type: T.Type, _ request: Request) throws -> T {
        try JSONBody.decode(type, from: caller.body, contentType: request.headers.value(.contentType))
    }
}

/// An operator signed in to the console: the admin token behind the session, and for a change the
/// form's fields (read once by the guard, which checked their form token).
struct ConsoleContext: AudienceContext {
    var coreContext: CoreRequestContextStorage
    let base: GatehouseRequestContext
    let console: ConsoleCaller
    let form: [String: String]

    init(context: GatehouseRequestContext) throws {
        guard case .console(let caller, let form) = context.admitted else { throw Problem.internalError() }
        (self.coreContext, self.base, self.console, self.form) = (context.coreContext, context, caller, form)
    }

    var actor: Actor { Actor(kind: .adminToken, name: console.tokenName) }
    var origin: ChangeOrigin { base.origin(of: actor) }
}

/// Who an audience's guard admitted, for the group's context to take up. Indirect: one reference in
/// every context whatever the caller's size, since a context is copied at each step of a request.
indirect enum AdmittedCaller: Sendable {
    case `operator`(Actor)
    case backend(BackendCaller)
    case sdk(SDKCaller)
    case console(ConsoleCaller, form: [String: String])
}
