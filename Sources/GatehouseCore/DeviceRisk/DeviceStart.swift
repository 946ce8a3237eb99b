import Foundation

/// The decision of one device start: what to store, what was dropped, and the device's identity.
public struct DeviceStart: Sendable {
    public static let maxFieldLength = 256

    public let device: Device
    /// Groups the report carried but the collection mode forbids; not stored.
    public let dropped: [DeviceDataGroup]

    /// Applies the collection mode and derives the identity.
    ///
    /// Identity: when the mode allows unique identifiers and the report has an IDFV, the device is
    /// `HMAC(identityKey, appID, "idfv", idfv)`, so a reinstall that keeps the IDFV (same vendor) or a
    /// new client device ID maps to the same device. Otherwise it is `HMAC(identityKey, appID, "client",
    /// clientDeviceID)`. Truncated to 16 bytes. The IDFA is never used for identity (users reset it).
    public static func decide(
        report: DeviceReport,
        app: App,
        address: String?,
        at now: Date,
        keys: ServerKeys
    ) throws(DomainError) -> DeviceStart {
        try app.requireActive()
        try validate(report)
        var dropped: [DeviceDataGroup] = []
        func allowed<T>(_ value: T?, _ group: DeviceDataGroup) -> T? {
            guard let value else { return nil }
            guard report.mode.allows(group) else {
                dropped.append(group)
                return nil
            }
            return value
        }
        let basic = allowed(report.basic, .basic)
        let reportedUnique = allowed(report.unique, .unique)
        let reportedExtra = allowed(report.extra, .extra)
        // No rule reads these identifiers; an operator compares them between devices. So the IDFA
        // (an advertising identifier Gatehouse has no use for) is never kept, and the IDFV and the
        // Wi-Fi names keep only a keyed digest: equal values still look equal, the values do not leak.
        func digest(_ kind: String, _ value: String?) -> String? {
            value.map { "hmac:" + Hex.encode(ServerKeys.mac(keys.deviceIdentity, [app.id.description, kind, $0]).prefix(16)) }
        }
        let unique = reportedUnique.map { UniqueDeviceData(idfv: digest("idfv", $0.idfv?.lowercased()), idfa: nil) }
        let extra = reportedExtra.map {
            ExtraDeviceData(wifiSsid: digest("wifi-ssid", $0.wifiSsid), wifiBssid: digest("wifi-bssid", $0.wifiBssid?.lowercased()))
        }

        let source: [String]
        if let idfv = reportedUnique?.idfv, !idfv.isEmpty {
            source = [app.id.description, "idfv", idfv.lowercased()]
        } else {
            source = [app.id.description, "client", report.clientDeviceID]
        }
        let id = DeviceID(bytes: Array(ServerKeys.mac(keys.deviceIdentity, source).prefix(16)))
        let device = Device(
            appID: app.id,
            id: id,
            clientDeviceID: report.clientDeviceID,
            mode: report.mode,
            platform: report.platform,
            sdkVersion: report.sdkVersion,
            basic: basic,
            unique: unique,
            extra: extra,
            environment: report.environment,
            firstSeen: now,
            lastSeen: now,
            lastAddress: address
        )
        return DeviceStart(device: device, dropped: dropped)
    }

    /// The device's request-signing key for its current epoch (32 bytes): derived from the master
    /// key, never stored; each device start moves to a new epoch, and so to a new key.
    public static func deviceKey(for device: Device, keys: ServerKeys) -> [UInt8] {
        ServerKeys.mac(keys.deviceKeyRoot, [device.appID.description, device.id.rawValue, String(device.keyEpoch)])
    }

    static func validate(_ report: DeviceReport) throws(DomainError) {
        guard (1...128).contains(report.clientDeviceID.unicodeScalars.count), !report.clientDeviceID.hasControlCharacters else {
            throw DomainError(.invalidDeviceData, "deviceId is 1 to 128 characters without control characters.", field: "deviceId")
        }
        let fields: [(String, String?)] = [
            ("sdkVersion", report.sdkVersion), ("basic.model", report.basic?.model), ("basic.osVersion", report.basic?.osVersion),
            ("basic.screen", report.basic?.screen), ("unique.idfv", report.unique?.idfv), ("unique.idfa", report.unique?.idfa),
            ("extra.wifiSsid", report.extra?.wifiSsid), ("extra.wifiBssid", report.extra?.wifiBssid),
        ]
        for (name, value) in fields {
            guard let value else { continue }
            guard value.unicodeScalars.count <= maxFieldLength, !value.hasControlCharacters else {
                throw DomainError(.invalidDeviceData, "\(name) is at most \(maxFieldLength) characters without control characters.", field: name)
            }
        }
    }
}
