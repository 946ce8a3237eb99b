import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseOperations
import GatehouseStore

/// Device-risk domain values into the generated API types.
extension Components.Schemas.RiskWeights {
    /// Each weighted tag's field (the domain keeps weights by the tag's name).
    static var fields: [(tag: RiskTag, field: WritableKeyPath<Self, Int?>)] {
        [
            (.deviceUnknown, \.device_unknown), (.deviceSimulator, \.device_simulator), (.deviceJailbreak, \.device_jailbreak),
            (.deviceDebugger, \.device_debugger), (.deviceHooking, \.device_hooking), (.deviceProxy, \.device_proxy),
            (.deviceVPN, \.device_vpn), (.deviceEventsPerMinute, \.velocity_deviceEventsPerMinute),
            (.deviceAccountsPerDay, \.velocity_deviceAccountsPerDay),
            (.accountDevicesPerDay, \.velocity_accountDevicesPerDay),
            (.ipDevicesPerHour, \.velocity_ipDevicesPerHour), (.ipChanged, \.network_ipChanged),
            (.attestationHardware, \.attestation_hardware), (.attestationFailed, \.attestation_failed),
            (.attestationMissing, \.attestation_missing), (.attestationPlayIntegrity, \.attestation_playIntegrity),
            (.attestationFarm, \.attestation_farm), (.deviceIntegrityFailed, \.device_integrityFailed),
            (.deviceActivityHigh, \.device_activityHigh), (.appUnrecognized, \.app_unrecognized), (.appUnlicensed, \.app_unlicensed),
            (.environmentRiskyApps, \.environment_riskyApps), (.environmentPlayProtectRisk, \.environment_playProtectRisk),
        ]
    }

    init(_ weights: [String: Int]) {
        self.init()
        for (tag, field) in Self.fields { self[keyPath: field] = weights[tag.rawValue] }
    }

    var byTag: [String: Int] {
        Dictionary(uniqueKeysWithValues: Self.fields.compactMap { tag, field in self[keyPath: field].map { (tag.rawValue, $0) } })
    }
}

extension Components.Schemas.RiskRules {
    init(_ rules: RiskRules) {
        self.init(
            reviewAt: rules.reviewAt,
            rejectAt: rules.rejectAt,
            maxDeviceEventsPerMinute: rules.maxDeviceEventsPerMinute,
            maxDeviceAccountsPerDay: rules.maxDeviceAccountsPerDay,
            maxAccountDevicesPerDay: rules.maxAccountDevicesPerDay,
            maxIPDevicesPerHour: rules.maxIPDevicesPerHour,
            maxAddressAttestationsPerHour: rules.maxAddressAttestationsPerHour,
            maxNetworkAttestationsPerHour: rules.maxNetworkAttestationsPerHour,
            maxAccountAttestationsPerDay: rules.maxAccountAttestationsPerDay,
            weights: rules.weights.map(Components.Schemas.RiskWeights.init)
        )
    }
}

extension RiskRules {
    init(_ rules: Components.Schemas.RiskRules) {
        self.init(
            reviewAt: rules.reviewAt,
            rejectAt: rules.rejectAt,
            maxDeviceEventsPerMinute: rules.maxDeviceEventsPerMinute,
            maxDeviceAccountsPerDay: rules.maxDeviceAccountsPerDay,
            maxAccountDevicesPerDay: rules.maxAccountDevicesPerDay,
            maxIPDevicesPerHour: rules.maxIPDevicesPerHour,
            maxAddressAttestationsPerHour: rules.maxAddressAttestationsPerHour,
            maxNetworkAttestationsPerHour: rules.maxNetworkAttestationsPerHour,
            maxAccountAttestationsPerDay: rules.maxAccountAttestationsPerDay,
            weights: rules.weights?.byTag
        )
    }
}

extension Components.Schemas.DeviceRecord {
    init(_ device: Device) {
        self.init(
            deviceId: device.id.rawValue,
            clientDeviceId: device.clientDeviceID,
            collectType: device.mode.rawValue,
            platform: device.platform.flatMap { Components.Schemas.Platform(rawValue: $0.rawValue) },
            sdkVersion: device.sdkVersion,
            basic: device.basic.map { .init(model: $0.model, osVersion: $0.osVersion, screen: $0.screen) },
            unique: device.unique.map { .init(idfv: $0.idfv, idfa: $0.idfa) },
            extra: device.extra.map { .init(wifiSsid: $0.wifiSsid, wifiBssid: $0.wifiBssid) },
            signals: device.environment.names,
            firstSeen: device.firstSeen,
            lastSeen: device.lastSeen,
            lastAddress: device.lastAddress
        )
    }
}

extension Components.Schemas.EffectiveRiskRules {
    init(_ rules: EffectiveRiskRules) {
        self.init(
            reviewAt: rules.reviewAt,
            rejectAt: rules.rejectAt,
            maxDeviceEventsPerMinute: rules.maxDeviceEventsPerMinute,
            maxDeviceAccountsPerDay: rules.maxDeviceAccountsPerDay,
            maxAccountDevicesPerDay: rules.maxAccountDevicesPerDay,
            maxIPDevicesPerHour: rules.maxIPDevicesPerHour,
            maxAddressAttestationsPerHour: rules.maxAddressAttestationsPerHour,
            maxNetworkAttestationsPerHour: rules.maxNetworkAttestationsPerHour,
            maxAccountAttestationsPerDay: rules.maxAccountAttestationsPerDay,
            weights: .init(additionalProperties: Dictionary(uniqueKeysWithValues: rules.weights.map { ($0.key.rawValue, $0.value) }))
        )
    }
}

extension Components.Schemas.RiskRulesView {
    init(_ view: RiskAdminOperations.RulesView) {
        self.init(
            rules: view.appRules.map(Components.Schemas.RiskRules.init),
            effective: .init(view.appEffective),
            events: view.events.map { event in
                .init(
                    eventId: event.event.eventID.rawValue,
                    rules: event.rules.map(Components.Schemas.RiskRules.init),
                    effective: .init(event.effective)
                )
            }
        )
    }
}

extension Components.Schemas.RiskListEntry {
    init(_ entry: GatehouseCore.RiskListEntry) {
        self.init(
            entryId: entry.id.text,
            list: {
                switch entry.kind {
                case .allow: .allow
                case .deny: .deny
                case .challenge: .challenge
                }
            }(),
            _type: Components.Schemas.RiskListEntry._TypePayload(rawValue: entry.subject.rawValue) ?? .device,
            value: entry.value,
            note: entry.note,
            createdAt: entry.createdAt
        )
    }
}

extension Components.Schemas.RefusedCount {
    init(_ listed: ListedRefusedCount) {
        let count = listed.count
        self.init(
            appKey: listed.appKey.rawValue,
            minute: count.minute,
            clientIp: count.clientAddress,
            tokenState: .init(rawValue: count.tokenState.rawValue) ?? .forged,
            decisions: Int64(count.decisions),
            firstAt: count.firstAt,
            lastAt: count.lastAt
        )
    }
}
