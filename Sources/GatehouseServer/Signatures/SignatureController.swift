import Crypto
import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseOperations
import Hummingbird

/// Request signatures for the app's backend: `POST /v1/signatures/verify`.
struct SignatureController {
    typealias Context = BackendContext
    let signatures: SignatureOperations

    func register(on routes: inout RouteRegistrar) {
        routes.on(.post, "/v1/signatures/verify", for: .backend, use: verify)
    }

    @Sendable func verify(_ request: Request, context: Context) async throws -> Response {
        let app = context.app
        let body = try await JSONBody.decode(Components.Schemas.SignatureVerifyRequest.self, from: request, context: context)
        guard (1...16).contains(body.method.utf8.count) else { throw Problem.badParameter("method", "method is 1 to 16 characters.") }
        guard (1...8192).contains(body.url.utf8.count) else { throw Problem.badParameter("url", "url is 1 to 8192 bytes.") }
        let verification = try await signatures.verify(
            app: app,
            request: PresentedRequest(
                method: body.method,
                url: body.url,
                bodyHash: try Self.bodyHash(body),
                wtoken: body.wtoken,
                whash: body.whash
            ),
            subject: try Self.subject(body),
            policy: body.onFailure == .challenge ? .challenge : .block,
            captchaPassToken: body.captchaPassToken
        )
        return try JSONBody.response(Components.Schemas.SignatureVerifyResponse(verification, appKey: app.appKey))
    }

    static func subject(_ body: Components.Schemas.SignatureVerifyRequest) throws -> SignatureOperations.Subject {
        var subject = SignatureOperations.Subject()
        if let account = body.accountId { subject.account = try AccountID(validating: account) }
        if let given = body.clientIp {
            guard let address = IPAddress(given.value1 ?? given.value2 ?? "") else {
                throw Problem.badParameter("clientIp", "clientIp is an IPv4 or IPv6 address.")
            }
            subject.address = address
        }
        return subject
    }

    /// The body's SHA-256 from whichever of the three forms was sent (none: an empty body).
    static func bodyHash(_ body: Components.Schemas.SignatureVerifyRequest) throws -> [UInt8] {
        let given = [body.body != nil, body.bodyBase64 != nil, body.bodySha256 != nil].filter { $0 }.count
        guard given <= 1 else { throw Problem.badParameter("body", "Send at most one of body, bodyBase64 and bodySha256.") }
        if let text = body.body { return Array(SHA256.hash(data: Array(text.utf8))) }
        if let encoded = body.bodyBase64 {
            guard let bytes = Data(base64Encoded: encoded) else { throw Problem.badParameter("bodyBase64", "bodyBase64 is not base64.") }
            return Array(SHA256.hash(data: bytes))
        }
        if let hex = body.bodySha256 {
            guard let bytes = Hex.decode(hex), bytes.count == 32 else {
                throw Problem.badParameter("bodySha256", "bodySha256 is 64 lower-case hex digits.")
            }
            return bytes
        }
        return Array(SHA256.hash(data: [UInt8]()))
    }
}
