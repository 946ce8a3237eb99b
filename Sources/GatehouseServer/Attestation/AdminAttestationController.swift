// Attestation: attesters, proof-of-work challenges, attestation tokens (JWT, token binding), the gate.
// Serves seeds 001 (HTTP 428, EO-Attest-Token) and 003 (Approov-Token, pay binding, dynamic configuration).

import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseOperations
import Hummingbird

/// `/v1/admin/...` for client attestation: attesters, the SDK configuration, signing keys.
struct AdminAttestationController {
    typealias Context = OperatorContext
    let attesters: AttesterOperations

    func register(on routes: inout RouteRegistrar) {
        routes.on(.post, "/v1/admin/apps/:appKey/attesters", for: .operators, use: createAttester)
        routes.on(.get, "/v1/admin/apps/:appKey/attesters", for: .operatorReads, use: listAttesters)
        routes.on(.get, "/v1/admin/apps/:appKey/attesters/:attestId", for: .operatorReads, use: attester)
        routes.on(.patch, "/v1/admin/apps/:appKey/attesters/:attestId", for: .operators, use: updateAttester)
        routes.on(.get, "/v1/admin/apps/:appKey/sdk-config", for: .operatorReads, use: sdkConfig)
        routes.on(.put, "/v1/admin/apps/:appKey/sdk-config", for: .operators, use: setSDKConfig)
        routes.on(.get, "/v1/admin/signing-keys", for: .operatorReads, use: signingKeys)
        routes.on(.post, "/v1/admin/signing-keys/rotate", for: .operators, use: rotateSigningKey)
    }

    @Sendable func createAttester(_ request: Request, context: Context) async throws -> Response {
        let body = try await JSONBody.decode(Components.Schemas.AttesterCreate.self, from: request, context: context)
        let appKey = try Query.appKey(context)
        let change = try AttesterChange(body)
        let result = try await attesters.createAttester(
            appKey,
            attestID: try AttestID(validating: body.attestId),
            change: change,
            origin: context.origin
        )
        return try JSONBody.response(try await Self.result(result, appKey: appKey), status: .created)
    }

    @Sendable func listAttesters(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        let attesters = try await attesters.attesters(appKey)
        let key = appKey
        return try JSONBody.response(Components.Schemas.AttesterList(items: attesters.map { .init($0, appKey: key) }))
    }

    @Sendable func attester(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        let attester = try await attesters.attester(appKey, attestID: try AttestID(validating: context.parameters.get("attestId") ?? ""))
        return try JSONBody.response(Components.Schemas.Attester(attester, appKey: appKey))
    }

    @Sendable func updateAttester(_ request: Request, context: Context) async throws -> Response {
        let body = try await JSONBody.decode(Components.Schemas.AttesterUpdate.self, from: request, context: context)
        let appKey = try Query.appKey(context)
        let result = try await attesters.updateAttester(
            appKey,
            attestID: try AttestID(validating: context.parameters.get("attestId") ?? ""),
            change: try AttesterChange(body),
            origin: context.origin
        )
        return try JSONBody.response(try await Self.result(result, appKey: appKey))
    }

    @Sendable func sdkConfig(_ request: Request, context: Context) async throws -> Response {
        try JSONBody.response(Components.Schemas.SDKConfigAdmin(try await attesters.sdkConfig(try Query.appKey(context))))
    }

    @Sendable func setSDKConfig(_ request: Request, context: Context) async throws -> Response {
        let body = try await JSONBody.decode(Components.Schemas.SDKConfigUpdate.self, from: request, context: context)
        let config = try await attesters.setProtectedHosts(
            try Query.appKey(context),
            hosts: body.protectedHosts.map { ($0.host, $0.pins) },
            origin: context.origin
        )
        return try JSONBody.response(Components.Schemas.SDKConfigAdmin(config))
    }

    @Sendable func signingKeys(_ request: Request, context: Context) async throws -> Response {
        let keys = try await attesters.keys.all()
        return try JSONBody.response(Components.Schemas.SigningKeyList(items: keys.map(Components.Schemas.SigningKeyInfo.init)))
    }

    @Sendable func rotateSigningKey(_ request: Request, context: Context) async throws -> Response {
        let key = try await attesters.keys.rotate(origin: context.origin)
        return try JSONBody.response(Components.Schemas.SigningKeyInfo(key), status: .created)
    }

    static func result(_ result: AttesterOperations.AttesterResult, appKey: AppKey) async throws -> Components.Schemas.AttesterResult {
        Components.Schemas.AttesterResult(attester: .init(result.attester, appKey: appKey), sharedSecret: result.sharedSecret)
    }
}
