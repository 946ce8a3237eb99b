import Foundation
import GatehouseAPI
import GatehouseCore
import Hummingbird

/// `/v1/admin/...` for client attestation: attesters, the SDK configuration, signing keys.
struct AdminAttestationController {
    let attestation: AttestationOperations

    func register(on routes: inout RouteRegistrar) {
        routes.on(.post, "/v1/admin/apps/:appKey/attesters", for: .operators) { request, context in
            let body = try await JSONBody.decode(Components.Schemas.AttesterCreate.self, from: request, context: context)
            let appKey = try Query.appKey(context)
            let result = try await attestation.createAttester(
                appKey,
                attestID: body.attestId,
                change: AttesterChange(body),
                origin: try context.origin()
            )
            return try JSONBody.response(try await Self.result(result, appKey: appKey), status: .created)
        }
        routes.on(.get, "/v1/admin/apps/:appKey/attesters", for: .operators) { _, context in
            let appKey = try Query.appKey(context)
            let attesters = try await attestation.attesters(appKey)
            let key = try AppKey(validating: appKey)
            return try JSONBody.response(Components.Schemas.AttesterList(items: attesters.map { .init($0, appKey: key) }))
        }
        routes.on(.get, "/v1/admin/apps/:appKey/attesters/:attestId", for: .operators) { _, context in
            let appKey = try Query.appKey(context)
            let attester = try await attestation.attester(appKey, attestID: context.parameters.get("attestId") ?? "")
            return try JSONBody.response(Components.Schemas.Attester(attester, appKey: try AppKey(validating: appKey)))
        }
        routes.on(.patch, "/v1/admin/apps/:appKey/attesters/:attestId", for: .operators) { request, context in
            let body = try await JSONBody.decode(Components.Schemas.AttesterUpdate.self, from: request, context: context)
            let appKey = try Query.appKey(context)
            let result = try await attestation.updateAttester(
                appKey,
                attestID: context.parameters.get("attestId") ?? "",
                change: AttesterChange(body),
                origin: try context.origin()
            )
            return try JSONBody.response(try await Self.result(result, appKey: appKey))
        }
        routes.on(.get, "/v1/admin/apps/:appKey/sdk-config", for: .operators) { _, context in
            try JSONBody.response(Components.Schemas.SDKConfigAdmin(try await attestation.sdkConfig(try Query.appKey(context))))
        }
        routes.on(.put, "/v1/admin/apps/:appKey/sdk-config", for: .operators) { request, context in
            let body = try await JSONBody.decode(Components.Schemas.SDKConfigUpdate.self, from: request, context: context)
            let config = try await attestation.setProtectedHosts(
                try Query.appKey(context),
                hosts: body.protectedHosts.map { ($0.host, $0.pins) },
                origin: try context.origin()
            )
            return try JSONBody.response(Components.Schemas.SDKConfigAdmin(config))
        }
        routes.on(.get, "/v1/admin/signing-keys", for: .operators) { _, _ in
            let keys = try await attestation.keys.all()
            return try JSONBody.response(Components.Schemas.SigningKeyList(items: keys.map(Components.Schemas.SigningKeyInfo.init)))
        }
        routes.on(.post, "/v1/admin/signing-keys/rotate", for: .operators) { _, context in
            let key = try await attestation.keys.rotate(origin: try context.origin())
            return try JSONBody.response(Components.Schemas.SigningKeyInfo(key), status: .created)
        }
    }

    static func result(_ result: AttestationOperations.AttesterResult, appKey: String) async throws -> Components.Schemas.AttesterResult {
        Components.Schemas.AttesterResult(attester: .init(result.attester, appKey: try AppKey(validating: appKey)), sharedSecret: result.sharedSecret)
    }
}
