import GatehouseCore
import GatehouseOperations
import HTTPTypes
import Hummingbird
import NIOCore

/// The guard of the SDK's routes: collects the (bounded) body, checks the request signature over it
/// with the app's `secretKey`, and hands the handler the app and the body it signed. Every refusal of
/// the group, the guard's or a handler's, leaves in the SDK's numeric codes (`AudienceErrors.sdk`).
struct SDKAuthMiddleware: RouterMiddleware {
    typealias Context = GatehouseRequestContext
    static let appKeyHeader = HTTPField.Name(SDKRequestSigning.appKeyHeader)!
    static let timestampHeader = HTTPField.Name(SDKRequestSigning.timestampHeader)!
    static let nonceHeader = HTTPField.Name(SDKRequestSigning.nonceHeader)!
    static let signatureHeader = HTTPField.Name(SDKRequestSigning.signatureHeader)!

    let operations: SDKOperations

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let body = try await JSONBody.collect(request, context: context)
        let app = try await operations.authenticate(
            .init(
                appKey: request.headers.value(Self.appKeyHeader),
                timestamp: request.headers.value(Self.timestampHeader),
                nonce: request.headers.value(Self.nonceHeader),
                signature: request.headers.value(Self.signatureHeader),
                method: request.method.rawValue,
                path: request.head.path ?? "/",
                body: Array(buffer: body)
            )
        )
        var context = context
        context.admitted = .sdk(SDKCaller(app: app, body: body))
        return try await next(request, context)
    }
}

/// The app whose SDK signature admitted a request, and the body it signed.
struct SDKCaller: Sendable {
    let app: App
    let body: ByteBuffer
}
