// DeviceRisk: device start, a ztoken per event, and the app backend's risk query that consumes it.
// Serves seed 002 (the device-risk SDK: appKey + secretKey, events 3300-3400, the H5 bridge).

/// The SDK's `collectType`: a bitmask of the privacy groups the user did NOT grant.
/// `TT_DEFAULT` = 0 (collect all), `TT_NO_BASIC_DATA` = 1, `TT_NO_UNIQUE_DATA` = 2,
/// `TT_NO_EXTRA_DATA` = 4, `TT_NOT_GRANTED` = 7 (none of them).
public struct CollectionMode: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let noBasicData = CollectionMode(rawValue: 1)
    public static let noUniqueData = CollectionMode(rawValue: 2)
    public static let noExtraData = CollectionMode(rawValue: 4)
    public static let fullCollection: CollectionMode = []
    public static let notGranted: CollectionMode = [.noBasicData, .noUniqueData, .noExtraData]

    public init(validating raw: Int) throws(DomainError) {
        guard (0...7).contains(raw) else {
            throw DomainError(.invalidCollectType, "collectType is a bitmask from 0 (TT_DEFAULT) to 7 (TT_NOT_GRANTED).", field: "collectType")
        }
        self.init(rawValue: raw)
    }

    public func allows(_ group: DeviceDataGroup) -> Bool {
        switch group {
        case .basic: !contains(.noBasicData)
        case .unique: !contains(.noUniqueData)
        case .extra: !contains(.noExtraData)
        }
    }
}

/// The privacy groups of device data, as the SDK's collection modes name them.
public enum DeviceDataGroup: String, Sendable, CaseIterable, Codable {
    /// Device model, OS version, screen.
    case basic
    /// IDFV and IDFA.
    case unique
    /// Wi-Fi SSID and BSSID.
    case extra
}
