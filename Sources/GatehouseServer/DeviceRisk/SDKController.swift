import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseOperations
import HTTPTypes
import Hummingbird
import NIOCore

/// `/v1/sdk/...`: what the mobile SDK calls. Every answer carries the SDK's numeric `code`.
struct SDKController {
    typealias Context = SDKContext
    let operations: SDKOperations

    func register(on routes: inout RouteRegistrar) {
        routes.on(.post, "/v1/sdk/device/start", for: .sdk, use: startDevice)
        routes.on(.post, "/v1/sdk/ztoken", for: .sdk, use: issueZToken)
        routes.on(.post, "/v1/sdk/ztoken/bridge", for: .sdk, use: issueBridgeZToken)
    }

    @Sendable func startDevice(_ request: Request, context: Context) async throws -> Response {
        let (app, input) = (context.app, try context.input(Components.Schemas.DeviceStartRequest.self, request))
        let started = try await operations.startDevice(app: app, report: try Self.report(input), address: context.clientAddress)
        return try JSONBody.response(
            Components.Schemas.DeviceStartResponse(
                code: ._0,
                message: "success",
                deviceId: started.device.id.rawValue,
                deviceKey: started.deviceKey,
                ztokenKey: started.ztokenKey,
                ztokenContext: started.ztokenContext,
                ztokenTtlSeconds: started.ztokenTTLSeconds,
                events: started.events,
                serverTime: started.device.lastSeen,
                collectType: started.device.mode.rawValue,
                dropped: started.dropped.compactMap { Components.Schemas.DataGroup(rawValue: $0.rawValue) },
                firstSeen: started.device.firstSeen,
                lastSeen: started.device.lastSeen
            )
        )
    }

    @Sendable func issueZToken(_ request: Request, context: Context) async throws -> Response {
        let (app, input) = (context.app, try context.input(Components.Schemas.ZTokenRequest.self, request))
        let issued = try await operations.issueZToken(
            app: app,
            deviceID: input.deviceId,
            eventID: input.eventId,
            accountID: input.accountId
        )
        return try JSONBody.response(
            Components.Schemas.ZTokenResponse(code: ._0, message: "success", z: issued.token, expiresAt: issued.expiresAt)
        )
    }

    @Sendable func issueBridgeZToken(_ request: Request, context: Context) async throws -> Response {
        let (app, input) = (context.app, try context.input(Components.Schemas.BridgeZTokenRequest.self, request))
        let issued = try await operations.issueBridgeZToken(
            app: app,
            deviceID: input.deviceId,
            js: input.js,
            url: input.url,
            cuid: input.c,
            uid: input.a
        )
        return try JSONBody.response(
            Components.Schemas.ZTokenResponse(code: ._0, message: "success", z: issued.token, expiresAt: issued.expiresAt)
        )
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
