import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseOperations
import Hummingbird

/// Client attestation for the mobile SDK (signed like `/v1/sdk`): challenges, attestation tokens and
/// the signed dynamic configuration (protected hosts and attesters).
struct AttestationSDKController {
    typealias Context = SDKContext
    let sdk: AttestationSDKOperations

    func register(on routes: inout RouteRegistrar) {
        routes.on(.post, "/v1/attest/challenges", for: .sdk, use: challenge)
        routes.on(.post, "/v1/attest/tokens", for: .sdk, use: token)
        routes.on(.get, "/v1/sdk/config", for: .sdk, use: config)
    }

    @Sendable func challenge(_ request: Request, context: Context) async throws -> Response {
        let (app, input) = (context.app, try context.input(Components.Schemas.AttestChallengeRequest.self, request))
        let issued = try await sdk.challenge(app: app, attestID: input.attestId, deviceID: input.deviceId, address: context.clientAddress)
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
                    ? CaptchaPage.link(appKey: app.appKey, attestID: issued.attester.attestID, deviceID: input.deviceId) : nil,
                nonce: issued.nonce,
                requestHash: issued.requestHash
            )
        )
    }

    @Sendable func token(_ request: Request, context: Context) async throws -> Response {
        let (app, input) = (context.app, try context.input(Components.Schemas.AttestTokenRequest.self, request))
        let issued = try await sdk.token(
            app: app,
            attestID: input.attestId,
            deviceID: input.deviceId,
            payload: input.payload,
            captchaPassToken: input.captchaPassToken,
            pay: input.pay,
            proof: try HardwareProof.parse(
                keyID: input.keyId,
                attestation: input.attestation,
                certificateChain: input.certificateChain,
                assertion: input.assertion
            ),
            integrityToken: input.integrityToken,
            integrityRequest: input.integrityRequest?.rawValue,
            nonce: input.nonce,
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

    @Sendable func config(_ request: Request, context: Context) async throws -> Response {
        let app = context.caller.app
        var since: Int64?
        if let text = request.uri.queryParameters.get("since") {
            guard let value = Int64(text), value >= 0 else {
                throw DomainError(.invalidSDKConfig, "since is the version the SDK holds, an integer from 0.", field: "since")
            }
            since = value
        }
        guard let signed = try await sdk.signedConfig(app: app, since: since) else { return Response(status: .notModified) }
        return try JSONBody.response(
            Components.Schemas.SignedSDKConfig(code: ._0, message: "success", version: Int(signed.version), config: signed.jws)
        )
    }
}
