import Foundation
import GatehouseAPI
import GatehouseCore
import HTTPTypes
import Hummingbird

/// Client attestation's public side: challenges and tokens for the SDK (signed like `/v1/sdk`), the
/// signed SDK configuration, the JWKS, introspection and the gate for the app's side.
struct AttestationController {
    static let originalMethod = HTTPField.Name("X-Original-Method")!
    static let originalURI = HTTPField.Name("X-Original-URI")!
    /// The full URL as the client sent it (scheme, host, path, query), for a request signature's whash.
    static let originalURL = HTTPField.Name("X-Original-URL")!
    static let signatureReasonHeader = HTTPField.Name("X-Gatehouse-Signature-Reason")!
    static let challengeHeader = HTTPField.Name("EO-Attest-Challenge")!
    static let reasonHeader = HTTPField.Name("X-Gatehouse-Attest-Reason")!
    static let attestIDHeader = HTTPField.Name("X-Gatehouse-Attest-Id")!
    static let deviceIDHeader = HTTPField.Name("X-Gatehouse-Device-Id")!
    let attestation: AttestationOperations

    func register(on routes: inout RouteRegistrar) {
        routes.on(.post, "/v1/attest/challenges", for: .sdk) { request, context in
            let app = try context.sdkCaller().app
            let body = try context.sdkCaller().body
            let input = try JSONBody.decode(
                Components.Schemas.AttestChallengeRequest.self,
                from: body,
                contentType: request.headers[.contentType]
            )
            let issued = try await attestation.challenge(
                app: app,
                attestID: input.attestId,
                deviceID: input.deviceId,
                address: context.clientAddress
            )
            return try JSONBody.response(
                Components.Schemas.AttestChallengeResponse(
                    code: ._0,
                    message: "success",
                    attestId: issued.attester.attestID.rawValue,
                    kind: .init(issued.attester.kind),
                    format: issued.attester.pow.format == .altchaV1 ? .altchaV1 : .altchaV2,
                    level: issued.level,
                    expiresAt: issued.expiresAt,
                    challenge: issued.challenge.map(Components.Schemas.AltchaChallenge.init),
                    captchaRequired: issued.captchaRequired,
                    captchaPage: issued.captchaRequired
                        ? CaptchaPage.link(appKey: app.appKey, attestID: issued.attester.attestID, deviceID: input.deviceId) : nil
                )
            )
        }
        routes.on(.post, "/v1/attest/tokens", for: .sdk) { request, context in
            let app = try context.sdkCaller().app
            let body = try context.sdkCaller().body
            let input = try JSONBody.decode(Components.Schemas.AttestTokenRequest.self, from: body, contentType: request.headers[.contentType])
            let issued = try await attestation.token(
                app: app,
                attestID: input.attestId,
                deviceID: input.deviceId,
                payload: input.payload,
                captchaPassToken: input.captchaPassToken,
                pay: input.pay,
                address: context.clientAddress
            )
            return try JSONBody.response(
                Components.Schemas.AttestTokenResponse(
                    code: ._0,
                    message: "success",
                    token: issued.token,
                    tokenHeader: issued.attester.tokenHeader,
                    expiresAt: issued.claims.expiresAt
                )
            )
        }
        routes.on(.get, "/v1/sdk/config", for: .sdk) { request, context in
            let app = try context.sdkCaller().app
            var since: Int64?
            if let text = request.uri.queryParameters.get("since") {
                guard let value = Int64(text), value >= 0 else {
                    throw DomainError(.invalidSDKConfig, "since is the version the SDK holds, an integer from 0.", field: "since")
                }
                since = value
            }
            guard let signed = try await attestation.signedConfig(app: app, since: since) else { return Response(status: .notModified) }
            return try JSONBody.response(
                Components.Schemas.SignedSDKConfig(code: ._0, message: "success", version: Int(signed.version), config: signed.jws)
            )
        }
        routes.on(.get, "/.well-known/jwks.json", for: .open) { _, _ in
            var response = try JSONBody.response(Components.Schemas.Jwks(keys: try await attestation.jwks().map(Self.jwk)))
            response.headers[.cacheControl] = "public, max-age=300"
            return response
        }
        routes.on(.post, "/v1/attest/introspect", for: .backend) { request, context in
            let app = try context.backendCaller().app
            let body = try await JSONBody.decode(Components.Schemas.IntrospectRequest.self, from: request, context: context)
            let outcome = try await attestation.introspect(
                app: app,
                token: body.token,
                attestID: body.attestId,
                boundValue: body.boundValue,
                consume: body.consume ?? false
            )
            switch outcome {
            case .active(let claims):
                return try JSONBody.response(Components.Schemas.IntrospectResponse(active: true, claims: .init(claims)))
            case .inactive(let reason):
                return try JSONBody.response(Components.Schemas.IntrospectResponse(active: false, reason: .init(rawValue: reason.rawValue)))
            }
        }
        routes.on(.get, "/v1/gate/verify", for: .gateway) { request, context in
            try await gate(request, app: try context.backendCaller().app)
        }
    }

    private func gate(_ request: Request, app: App) async throws -> Response {
        guard let method = request.headers[Self.originalMethod], (1...16).contains(method.utf8.count),
            let uri = request.headers[Self.originalURI], (1...8192).contains(uri.utf8.count)
        else {
            throw Problem.badParameter("X-Original-Method", "Send the original request's method and URI in X-Original-Method and X-Original-URI.")
        }
        var status = HTTPResponse.Status.unauthorized
        if let text = request.uri.queryParameters.get("challengeStatus") {
            guard text == "401" || text == "428" else { throw Problem.badParameter("challengeStatus", "challengeStatus is 401 or 428.") }
            status = text == "428" ? .preconditionRequired : .unauthorized
        }
        let url = request.headers[Self.originalURL]
        if let url, !(1...8192).contains(url.utf8.count) {
            throw Problem.badParameter("X-Original-URL", "X-Original-URL is 1 to 8192 bytes.")
        }
        let verdict = try await attestation.gate(app: app, method: method, uri: uri, url: url) { name in
            HTTPField.Name(name).flatMap { request.headers[$0] }
        }
        switch verdict {
        case .open:
            return Response(status: .noContent)
        case .pass(let attester, let claims):
            return Response(status: .noContent, headers: [Self.attestIDHeader: attester.rawValue, Self.deviceIDHeader: claims.did])
        case .challenge(let attester, let reason):
            var problem = Problem(
                status,
                code: "attestation_required",
                title: "Attestation required",
                detail: "Attest with \(attester) and retry with its token (\(reason.rawValue))."
            )
            problem.extraHeaders[Self.challengeHeader] = attester.rawValue
            problem.extraHeaders[Self.reasonHeader] = reason.rawValue
            throw problem
        case .refuse(let attester, let reason):
            var problem = Problem(
                .forbidden,
                code: "signature_refused",
                title: "Request signature refused",
                detail: "Attester \(attester) requires a valid request signature (\(reason.rawValue))."
            )
            problem.extraHeaders[Self.signatureReasonHeader] = reason.rawValue
            throw problem
        }
    }

    static func jwk(_ key: JWK) -> Components.Schemas.Jwk {
        .init(kty: .ec, crv: .p256, x: key.x, y: key.y, kid: key.kid, use: .sig, alg: .es256)
    }
}
