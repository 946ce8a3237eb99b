import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseOperations
import HTTPTypes
import Hummingbird

/// Object storage for attested devices: the STS token distribution endpoint (and the seed's
/// `/distribute-token.json` path), self-signed OSS signatures and presigned URLs. Answers and
/// refusals keep the OSS SDKs' JSON shape (`StatusCode`, ...); nothing here is ever cached.
struct STSController {
    typealias Context = GatehouseRequestContext
    let sts: STSOperations

    func register(on routes: inout RouteRegistrar) {
        for path in ["/v1/sts/token", "/distribute-token.json"] {
            routes.on(.get, path, for: .sts, use: token)
        }
        routes.on(.post, "/v1/oss/sign", for: .sts, use: signOSS)
        routes.on(.post, "/v1/storage/presign", for: .sts, use: presign)
    }

    @Sendable func token(_ request: Request, context: Context) async throws -> Response {
        let query = request.uri.queryParameters
        let credentials = try await sts.credentials(
            appKey: try AppKey(validating: try Self.required(query, "appKey")),
            roleID: try Self.required(query, "roleId"),
            accountID: query.get("accountId"),
            header: Self.headerReader(request)
        )
        return try Self.private(
            Components.Schemas.STSToken(
                statusCode: 200,
                accessKeyId: credentials.accessKeyID,
                accessKeySecret: credentials.accessKeySecret,
                expiration: UTCTime(credentials.expiration).iso8601,
                securityToken: credentials.securityToken
            )
        )
    }

    @Sendable func signOSS(_ request: Request, context: Context) async throws -> Response {
        let body = try await JSONBody.decode(Components.Schemas.OSSSignRequest.self, from: request, context: context)
        let authorization = try await sts.signOSS(
            appKey: try AppKey(validating: body.appKey),
            roleID: body.roleId,
            content: body.content,
            accountID: body.accountId,
            header: Self.headerReader(request)
        )
        return try Self.private(Components.Schemas.OSSSignResponse(statusCode: 200, authorization: authorization))
    }

    @Sendable func presign(_ request: Request, context: Context) async throws -> Response {
        let body = try await JSONBody.decode(Components.Schemas.PresignRequest.self, from: request, context: context)
        let presigned = try await sts.presign(
            appKey: try AppKey(validating: body.appKey),
            roleID: body.roleId,
            request: PresignRequest(
                method: body.method.rawValue,
                bucket: body.bucket,
                key: body.key,
                expiresIn: body.expiresIn,
                contentType: body.contentType,
                ossV4: body.signatureVersion == .v4
            ),
            accountID: body.accountId,
            header: Self.headerReader(request)
        )
        return try Self.private(
            Components.Schemas.PresignResponse(
                statusCode: 200,
                url: presigned.url,
                method: body.method,
                expiration: UTCTime(presigned.expiration).iso8601
            )
        )
    }

    static func headerReader(_ request: Request) -> (String) -> String? {
        { name in HTTPField.Name(name).flatMap { request.headers.value($0) } }
    }

    static func required(_ query: Parameters, _ name: String) throws -> String {
        guard let value = query.get(name), !value.isEmpty else { throw Problem.badParameter(name, "\(name) is required.") }
        return value
    }

    /// Credentials and signatures must not sit in a shared cache.
    static func `private`(_ body: some Encodable) throws -> Response {
        var response = try JSONBody.response(body)
        response.headers[.cacheControl] = "no-store"
        return response
    }
}
