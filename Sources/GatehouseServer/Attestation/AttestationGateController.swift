import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseOperations
import HTTPTypes
import Hummingbird

/// Client attestation on the app's side: the JWKS, introspection for its backend, and the gate that
/// nginx `auth_request` asks in front of its API.
struct AttestationGateController {
    typealias Context = GatehouseRequestContext
    static let originalMethod = HTTPField.Name("X-Original-Method")!
    static let originalURI = HTTPField.Name("X-Original-URI")!
    /// The full URL as the client sent it (scheme, host, path, query), for a request signature's whash.
    static let originalURL = HTTPField.Name("X-Original-URL")!
    static let signatureReasonHeader = HTTPField.Name("X-Gatehouse-Signature-Reason")!
    static let challengeHeader = HTTPField.Name("EO-Attest-Challenge")!
    static let reasonHeader = HTTPField.Name("X-Gatehouse-Attest-Reason")!
    static let attestIDHeader = HTTPField.Name("X-Gatehouse-Attest-Id")!
    static let deviceIDHeader = HTTPField.Name("X-Gatehouse-Device-Id")!
    static let verdictHeader = HTTPField.Name("X-Gatehouse-Attest-Verdict")!
    let gate: AttestationGateOperations
    /// Counts each gated request's verdict on /metrics.
    let onVerdict: @Sendable (AttestVerdictLabels) -> Void

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/.well-known/jwks.json", for: .open, use: jwks)
        routes.on(.post, "/v1/attest/introspect", for: .backend, use: introspect)
        routes.on(.get, "/v1/gate/verify", for: .gateway, use: verify)
    }

    @Sendable func jwks(_ request: Request, context: Context) async throws -> Response {
        var response = try JSONBody.response(Components.Schemas.Jwks(keys: try await gate.jwks().map(Self.jwk)))
        response.headers[.cacheControl] = "public, max-age=300"
        return response
    }

    @Sendable func introspect(_ request: Request, context: BackendContext) async throws -> Response {
        let app = context.app
        let body = try await JSONBody.decode(Components.Schemas.IntrospectRequest.self, from: request, context: context)
        let outcome = try await gate.introspect(
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

    @Sendable func verify(_ request: Request, context: BackendContext) async throws -> Response {
        let app = context.app
        let original = try Self.originalRequest(request.headers)
        var status = HTTPResponse.Status.unauthorized
        if let text = request.uri.queryParameters.get("challengeStatus") {
            guard text == "401" || text == "428" else { throw Problem.badParameter("challengeStatus", "challengeStatus is 401 or 428.") }
            status = text == "428" ? .preconditionRequired : .unauthorized
        }
        let answer = try await gate.gate(app: app, method: original.method, uri: original.uri, url: original.url) { name in
            HTTPField.Name(name).flatMap { request.headers.value($0) }
        }
        Self.count(answer, of: app.appKey, onVerdict: onVerdict)
        return Response(status: .noContent, headers: try Self.letThrough(answer.verdict, challengeStatus: status).get())
    }

    /// The original request the proxy describes: its method, its URI and, when sent, its full URL.
    static func originalRequest(_ headers: HTTPFields) throws -> (method: String, uri: String, url: String?) {
        guard let method = headers.value(Self.originalMethod), (1...16).contains(method.utf8.count),
            let uri = headers.value(Self.originalURI), (1...8192).contains(uri.utf8.count)
        else {
            throw Problem.badParameter("X-Original-Method", "Send the original request's method and URI in X-Original-Method and X-Original-URI.")
        }
        let url = headers.value(Self.originalURL)
        if let url, !(1...8192).contains(url.utf8.count) {
            throw Problem.badParameter("X-Original-URL", "X-Original-URL is 1 to 8192 bytes.")
        }
        return (method, uri, url)
    }

    /// The 204's headers for a request the gate lets through; for a challenge or a refusal, the problem.
    static func letThrough(_ verdict: GateVerdict, challengeStatus: HTTPResponse.Status) -> Result<HTTPFields, Problem> {
        switch verdict {
        case .open:
            return .success([:])
        case .pass(let attester, let claims):
            return .success([
                Self.attestIDHeader: attester.rawValue, Self.deviceIDHeader: claims.did, Self.verdictHeader: AttestVerdict.valid.rawValue,
            ])
        case .monitored(let attester, let verdict, let claims):
            // Let through: the attester is in monitor. The verdict says what enforcing would have done.
            var headers: HTTPFields = [Self.attestIDHeader: attester.rawValue, Self.verdictHeader: verdict.rawValue]
            if let claims { headers[Self.deviceIDHeader] = claims.did }
            return .success(headers)
        case .challenge(let attester, let reason):
            var problem = Problem(
                challengeStatus,
                code: "attestation_required",
                title: "Attestation required",
                detail: "Attest with \(attester) and retry with its token (\(reason.rawValue))."
            )
            problem.extraHeaders[Self.challengeHeader] = attester.rawValue
            problem.extraHeaders[Self.reasonHeader] = reason.rawValue
            return .failure(problem)
        case .refuse(let attester, let reason):
            var problem = Problem(
                .forbidden,
                code: "signature_refused",
                title: "Request signature refused",
                detail: "Attester \(attester) requires a valid request signature (\(reason.rawValue))."
            )
            problem.extraHeaders[Self.signatureReasonHeader] = reason.rawValue
            return .failure(problem)
        }
    }

    static func count(_ answer: AttestationGateOperations.GateAnswer, of app: AppKey, onVerdict: (AttestVerdictLabels) -> Void) {
        guard let found = answer.verdict.attestVerdict else { return }
        var monitored = false
        if case .monitored = answer.verdict { monitored = true }
        let route = answer.route ?? "unreadable path"
        onVerdict(AttestVerdictLabels(app: app, attester: found.attester, route: route, verdict: found.verdict, monitored: monitored))
    }

    static func jwk(_ key: JWK) -> Components.Schemas.Jwk {
        .init(kty: .ec, crv: .p256, x: key.x, y: key.y, kid: key.kid, use: .sig, alg: .es256)
    }
}

/// What labels a gated request's verdict on /metrics: app, attester, route, verdict, enforcement.
struct AttestVerdictLabels: Hashable, Sendable {
    let app: AppKey
    let attester: AttestID
    let route: String
    let verdict: AttestVerdict
    let monitored: Bool
}
