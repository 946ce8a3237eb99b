import Crypto
import Foundation

/// Gatehouse's own identity for a device within one app: 16 bytes, shown as 22 base64url characters.
public struct DeviceID: Hashable, Sendable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init(bytes: [UInt8]) {
        precondition(bytes.count == 16, "a DeviceID is 16 bytes")
        self.bytes = bytes
    }

    public init(validating text: String) throws(DomainError) {
        guard text.count == 22, let bytes = Base64URL.decode(text), bytes.count == 16 else {
            throw DomainError(.invalidDeviceID, "A device id is 22 base64url characters, as device start returns it.", field: "deviceId")
        }
        self.bytes = bytes
    }

    public var rawValue: String { Base64URL.encode(bytes) }
    public var description: String { rawValue }
}

public struct BasicDeviceData: Equatable, Sendable, Codable {
    public var model: String?
    public var osVersion: String?
    public var screen: String?
    public init(model: String? = nil, osVersion: String? = nil, screen: String? = nil) {
        self.model = model
        self.osVersion = osVersion
        self.screen = screen
    }
}

public struct UniqueDeviceData: Equatable, Sendable, Codable {
    public var idfv: String?
    public var idfa: String?
    public init(idfv: String? = nil, idfa: String? = nil) {
        self.idfv = idfv
        self.idfa = idfa
    }
}

public struct ExtraDeviceData: Equatable, Sendable, Codable {
    public var wifiSsid: String?
    public var wifiBssid: String?
    public init(wifiSsid: String? = nil, wifiBssid: String? = nil) {
        self.wifiSsid = wifiSsid
        self.wifiBssid = wifiBssid
    }
}

/// What the SDK observed about the runtime. These are security signals, not one of the privacy
/// groups, so every collection mode keeps them.
public struct EnvironmentSignals: OptionSet, Sendable, Hashable {
    public let rawValue: Int
    public init(rawValue: Int) { self.rawValue = rawValue }

    public static let simulator = EnvironmentSignals(rawValue: 1)
    public static let jailbreak = EnvironmentSignals(rawValue: 2)
    public static let debugger = EnvironmentSignals(rawValue: 4)
    public static let hooking = EnvironmentSignals(rawValue: 8)
    public static let proxy = EnvironmentSignals(rawValue: 16)
    public static let vpn = EnvironmentSignals(rawValue: 32)

    public static let named: [(String, EnvironmentSignals)] = [
        ("simulator", .simulator), ("jailbreak", .jailbreak), ("debugger", .debugger), ("hooking", .hooking), ("proxy", .proxy),
        ("vpn", .vpn),
    ]

    public var names: [String] { Self.named.filter { contains($0.1) }.map(\.0) }
}

/// What one device start reported, before the collection mode is applied.
public struct DeviceReport: Sendable, Equatable {
    public var clientDeviceID: String
    public var mode: CollectionMode
    public var platform: Platform?
    public var sdkVersion: String?
    public var basic: BasicDeviceData?
    public var unique: UniqueDeviceData?
    public var extra: ExtraDeviceData?
    public var environment: EnvironmentSignals

    public init(
        clientDeviceID: String,
        mode: CollectionMode,
        platform: Platform? = nil,
        sdkVersion: String? = nil,
        basic: BasicDeviceData? = nil,
        unique: UniqueDeviceData? = nil,
        extra: ExtraDeviceData? = nil,
        environment: EnvironmentSignals = []
    ) {
        self.clientDeviceID = clientDeviceID
        self.mode = mode
        self.platform = platform
        self.sdkVersion = sdkVersion
        self.basic = basic
        self.unique = unique
        self.extra = extra
        self.environment = environment
    }
}

/// A device as stored: only the groups its latest collection mode allowed.
public struct Device: Equatable, Sendable {
    public let appID: AppID
    public let id: DeviceID
    public var clientDeviceID: String
    public var mode: CollectionMode
    public var platform: Platform?
    public var sdkVersion: String?
    public var basic: BasicDeviceData?
    public var unique: UniqueDeviceData?
    public var extra: ExtraDeviceData?
    public var environment: EnvironmentSignals
    public var firstSeen: Date
    public var lastSeen: Date
    public var lastAddress: String?
    /// Bumped by every device start: the device's signing key is derived with it, so a re-initialised
    /// device signs with a new key and the old one stops verifying.
    public var keyEpoch: Int
    /// What the device's hardware proved (or failed to), kept apart from what its SDK says.
    public var hardware: HardwareAttestationState = .none
    /// What Google Play Integrity's latest verdict on the device said, and when.
    public var integrity: PlayIntegrityState?

    public init(
        appID: AppID,
        id: DeviceID,
        clientDeviceID: String,
        mode: CollectionMode,
        platform: Platform?,
        sdkVersion: String?,
        basic: BasicDeviceData?,
        unique: UniqueDeviceData?,
        extra: ExtraDeviceData?,
        environment: EnvironmentSignals,
        firstSeen: Date,
        lastSeen: Date,
        lastAddress: String?,
        keyEpoch: Int = 0
    ) {
        self.appID = appID
        self.id = id
        self.clientDeviceID = clientDeviceID
        self.mode = mode
        self.platform = platform
        self.sdkVersion = sdkVersion
        self.basic = basic
        self.unique = unique
        self.extra = extra
        self.environment = environment
        self.firstSeen = firstSeen
        self.lastSeen = lastSeen
        self.lastAddress = lastAddress
        self.keyEpoch = keyEpoch
    }
}

/// A device's latest Play Integrity verdict, accepted or refused by its attester, as its row keeps it.
public struct PlayIntegrityState: Equatable, Sendable {
    public let facts: PlayIntegrityFacts
    public let at: Date

    public init(facts: PlayIntegrityFacts, at: Date) {
        self.facts = facts
        self.at = at
    }
}

/// What hardware attestation says of a device: the facts of its newest attested key, else whether
/// an attestation in its name was refused. A refusal never outweighs a proof: anyone holding the
/// app's `secretKey` can send a bad attestation under any device id, but only the device's hardware
/// can make a good one.
public enum HardwareAttestationState: Equatable, Sendable {
    case none
    case attested(HardwareFacts, at: Date)
    case failed(at: Date)

    public init(facts: HardwareFacts?, attestedAt: Date?, failedAt: Date?) {
        if let facts, let attestedAt {
            self = .attested(facts, at: attestedAt)
        } else if let failedAt {
            self = .failed(at: failedAt)
        } else {
            self = .none
        }
    }
}
