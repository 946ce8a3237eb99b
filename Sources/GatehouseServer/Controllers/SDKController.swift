import Foundation
import GatehouseAPI
import GatehouseCore
import HTTPTypes
import Hummingbird
import NIOCore

/// `/v1/sdk/...`: what the mobile SDK calls. Every answer carries the SDK's numeric `code`.
struct SDKController {
    static let appKeyHeader = HTTPField.Name(SDKRequestSigning.appKeyHeader)!
    static let timestampHeader = HTTPField.Name(SDKRequestSigning.timestampHeader)!
    static let nonceHeader = HTTPField.Name(SDKRequestSigning.nonceHeader)!
    static let signatureHeader = HTTPField.Name(SDKRequestSigning.signatureHeader)!

    let operations: SDKOperations

    func register(on routes: inout RouteRegistrar) {
        routes.on(.post, "/v1/sdk/device/start") { request, context in
            try await signed(request, context) { app, body in
                let input = try JSONBody.decode(Components.Schemas.DeviceStartRequest.self, from: body, contentType: request.headers[.contentType])
                let started = try await operations.startDevice(app: app, report: try Self.report(input), address: context.clientAddress)
                return try JSONBody.response(
                    Components.Schemas.DeviceStartResponse(
                        code: ._0,
                        message: "success",
                        deviceId: started.device.id.rawValue,
                        deviceKey: started.deviceKey,
                        ztokenTtlSeconds: started.ztokenTTLSeconds,
                        collectType: started.device.mode.rawValue,
                        dropped: started.dropped.compactMap { Components.Schemas.DataGroup(rawValue: $0.rawValue) },
                        firstSeen: started.device.firstSeen,
                        lastSeen: started.device.lastSeen
                    )
                )
            }
        }
        routes.on(.post, "/v1/sdk/ztoken") { request, context in
            try await signed(request, context) { app, body in
                let input = try JSONBody.decode(Components.Schemas.ZTokenRequest.self, from: body, contentType: request.headers[.contentType])
                let issued = try await operations.issueZToken(
                    app: app,
                    deviceID: input.deviceId,
                    eventID: input.eventId,
                    accountID: input.accountId,
                    address: context.clientAddress
                )
                return try JSONBody.response(
                    Components.Schemas.ZTokenResponse(code: ._0, message: "success", z: issued.token, expiresAt: issued.expiresAt)
                )
            }
        }
        routes.on(.post, "/v1/sdk/ztoken/bridge") { request, context in
            try await signed(request, context) { app, body in
                let input = try JSONBody.decode(Components.Schemas.BridgeZTokenRequest.self, from: body, contentType: request.headers[.contentType])
                let issued = try await operations.issueBridgeZToken(
                    app: app,
                    deviceID: input.deviceId,
                    js: input.js,
                    url: input.url,
                    cuid: input.c,
                    uid: input.a,
                    address: context.clientAddress
                )
                return try JSONBody.response(
                    Components.Schemas.ZTokenResponse(code: ._0, message: "success", z: issued.token, expiresAt: issued.expiresAt)
                )
            }
        }
    }

    /// Collects the body, checks the request signature over it, runs `body`, and turns any refusal
    /// into the SDK's numeric code.
    func signed(
        _ request: Request,
        _ context: GatehouseRequestContext,
        _ handle: (App, ByteBuffer) async throws -> Response
    ) async throws -> Response {
        do {
            let body = try await JSONBody.collect(request, context: context)
            let app = try await operations.authenticate(
                .init(
                    appKey: request.headers[Self.appKeyHeader],
                    timestamp: request.headers[Self.timestampHeader],
                    nonce: request.headers[Self.nonceHeader],
                    signature: request.headers[Self.signatureHeader],
                    method: request.method.rawValue,
                    path: request.head.path ?? "/",
                    body: Array(buffer: body)
                )
            )
            return try await handle(app, body)
        } catch {
            throw SDKError.from(error)
        }
    }

    static func report(_ input: Components.Schemas.DeviceStartRequest) throws(DomainError) -> DeviceReport {
        var environment: EnvironmentSignals = []
        if let signals = input.environment {
            let flags: [(Bool?, EnvironmentSignals)] = [
                (signals.simulator, .simulator), (signals.jailbreak, .jailbreak), (signals.debugger, .debugger), (signals.hooking, .hooking),
                (signals.proxy, .proxy), (signals.vpn, .vpn),
            ]
            for (flag, signal) in flags where flag == true { environment.insert(signal) }
        }
        return DeviceReport(
            clientDeviceID: input.deviceId,
            mode: try CollectionMode(validating: input.collectType),
            platform: input.platform.flatMap { Platform(rawValue: $0.rawValue) },
            sdkVersion: input.sdkVersion,
            basic: input.basic.map { BasicDeviceData(model: $0.model, osVersion: $0.osVersion, screen: $0.screen) },
            unique: input.unique.map { UniqueDeviceData(idfv: $0.idfv, idfa: $0.idfa) },
            extra: input.extra.map { ExtraDeviceData(wifiSsid: $0.wifiSsid, wifiBssid: $0.wifiBssid) },
            environment: environment
        )
    }
}
