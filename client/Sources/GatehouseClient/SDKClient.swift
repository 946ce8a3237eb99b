import Foundation
import GatehouseAPI
import GatehouseSigning
import HTTPTypes
import OpenAPIRuntime

/// The app's calls to Gatehouse through the generated client (types and paths from openapi.yaml):
/// every `/v1/sdk` and `/v1/attest` request signed over the exact bytes the generated client sends,
/// and every refusal turned into the SDK's error, so that each call has one success path.
struct SDKClient: Sendable {
    let client: Client

    init(baseURL: URL, appKey: String, secretKey: String, transport: any ClientTransport) {
        client = Client(
            serverURL: baseURL,
            transport: transport,
            middlewares: [SDKRefusalMiddleware(), SDKSigningMiddleware(appKey: appKey, secretKey: secretKey), AttestationHeaderMiddleware()]
        )
    }
}

/// Signs a request once its body's bytes are known. The generated input names the four signature
/// headers (`SDKSignedHeaders`); this fills them from the method, path and body as
/// docs/sdk-protocol.md says, with a fresh nonce. A request that names no app key in its headers (the
/// STS token's, which names it in its query) passes untouched.
struct SDKSigningMiddleware: ClientMiddleware {
    let appKey: String
    let secretKey: String
    /// More than any SDK body: the server refuses past its own, smaller limit.
    static let largestBody = 1 << 20

    /// The placeholder the generated input carries in the signature header until this middleware signs.
    static let unsigned = ""

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        guard let appKeyHeader = HTTPField.Name(SDKRequestSigning.appKeyHeader), request.headerFields[appKeyHeader] != nil else {
            return try await next(request, body, baseURL)
        }
        let bytes: [UInt8] = if let body { try await [UInt8](collecting: body, upTo: Self.largestBody) } else { [] }
        var request = request
        let path = String((request.path ?? "/").prefix { $0 != "?" })
        let headers = SDKRequestSigning.headers(appKey: appKey, secretKey: secretKey, method: request.method.rawValue, path: path, body: bytes)
        for (name, value) in headers {
            guard let field = HTTPField.Name(name) else { continue }
            request.headerFields[field] = value
        }
        return try await next(request, body == nil ? nil : HTTPBody(bytes), baseURL)
    }
}

/// A refusal as the caller's error: the SDK's `{code, reason, message}`, or the STS endpoint's
/// `{StatusCode, ErrorCode, ErrorMessage}` (docs/sts.md).
struct SDKRefusalMiddleware: ClientMiddleware {
    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, responseBody) = try await next(request, body, baseURL)
        guard response.status.kind != .successful else { return (response, responseBody) }
        let data = if let responseBody { try await Data(collecting: responseBody, upTo: 1 << 20) } else { Data() }
        let status = response.status.code
        if operationID == "getSTSToken" {
            let refusal = try? JSONDecoder().decode(Components.Schemas.STSError.self, from: data)
            throw GatehouseClientError.storage(
                statusCode: refusal?.statusCode ?? status,
                errorCode: refusal?.errorCode ?? "http_\(status)",
                message: refusal?.errorMessage ?? ""
            )
        }
        let refusal = try? JSONDecoder().decode(Components.Schemas.SDKError.self, from: data)
        throw GatehouseClientError.sdk(
            code: refusal.map { $0.code.rawValue } ?? -8,
            reason: refusal?.reason ?? "http_\(status)",
            message: refusal?.message ?? ""
        )
    }
}

/// The attestation token for the STS call goes in the header its attester names, which may be other
/// than the `EO-Attest-Token` the document lists; the call sets it for its task.
struct AttestationHeaderMiddleware: ClientMiddleware {
    @TaskLocal static var token: (header: String, value: String)?

    func intercept(
        _ request: HTTPRequest,
        body: HTTPBody?,
        baseURL: URL,
        operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        guard let token = Self.token, let name = HTTPField.Name(token.header) else { return try await next(request, body, baseURL) }
        var request = request
        request.headerFields[name] = token.value
        return try await next(request, body, baseURL)
    }
}

/// The generated input of a signed call: the app's key and the three signature headers, left for
/// `SDKSigningMiddleware` to fill once the body is encoded.
protocol SDKSignedHeaders {
    associatedtype Acceptable: AcceptableProtocol
    init(
        xGatehouseAppKey: String,
        xGatehouseTimestamp: String,
        xGatehouseNonce: String,
        xGatehouseSignature: String,
        accept: [AcceptHeaderContentType<Acceptable>]
    )
}

extension SDKSignedHeaders {
    init(unsignedFor appKey: String) {
        let unsigned = SDKSigningMiddleware.unsigned
        self.init(
            xGatehouseAppKey: appKey,
            xGatehouseTimestamp: unsigned,
            xGatehouseNonce: unsigned,
            xGatehouseSignature: unsigned,
            accept: .defaultValues()
        )
    }
}

extension Operations.StartDevice.Input.Headers: SDKSignedHeaders {}
extension Operations.IssueZToken.Input.Headers: SDKSignedHeaders {}
extension Operations.IssueBridgeZToken.Input.Headers: SDKSignedHeaders {}
extension Operations.FetchAttestChallenge.Input.Headers: SDKSignedHeaders {}
extension Operations.RedeemAttestSolution.Input.Headers: SDKSignedHeaders {}
