import Crypto
import Foundation

/// A device key that a platform's hardware vouched for, as Gatehouse keeps it: later requests from
/// the device are signed by it (App Attest assertions with a counter that only goes up, Android
/// signatures over a single-use nonce), so the device need not attest again.
public struct AttestedDeviceKey: Equatable, Sendable {
    public enum Platform: String, Sendable, Codable {
        case appAttest = "app_attest"
        case androidKey = "android_key"
    }

    public let appID: AppID
    /// App Attest's key id; for Android, SHA-256 of the key's SubjectPublicKeyInfo. Base64url.
    public let keyID: String
    public let platform: Platform
    public let attestID: AttestID
    public let deviceID: DeviceID?
    /// X9.63 for App Attest, SubjectPublicKeyInfo DER for Android.
    public let publicKey: [UInt8]
    /// App Attest's signature counter; always 0 for Android.
    public var counter: UInt32
    public let facts: HardwareFacts
    /// Apple's receipt, kept for an operator who later asks Apple for the device's risk metric.
    public let receipt: [UInt8]?
    public let attestedAt: Date
    public var lastUsedAt: Date

    public init(
        appID: AppID,
        keyID: String,
        platform: Platform,
        attestID: AttestID,
        deviceID: DeviceID?,
        publicKey: [UInt8],
        counter: UInt32,
        facts: HardwareFacts,
        receipt: [UInt8]?,
        attestedAt: Date,
        lastUsedAt: Date
    ) {
        self.appID = appID
        self.keyID = keyID
        self.platform = platform
        self.attestID = attestID
        self.deviceID = deviceID
        self.publicKey = publicKey
        self.counter = counter
        self.facts = facts
        self.receipt = receipt
        self.attestedAt = attestedAt
        self.lastUsedAt = lastUsedAt
    }

    /// The key App Attest vouched for, to keep.
    public init(_ key: AppAttestKey, environment: AppAttestEnvironment, appID: AppID, attestID: AttestID, deviceID: DeviceID?, at time: Date) {
        self.init(
            appID: appID,
            keyID: Base64URL.encode(key.keyID),
            platform: .appAttest,
            attestID: attestID,
            deviceID: deviceID,
            publicKey: key.publicKey,
            counter: key.counter,
            facts: HardwareFacts(app: key.bundleID, securityLevel: .secureEnclave, environment: environment.rawValue),
            receipt: key.receipt,
            attestedAt: time,
            lastUsedAt: time
        )
    }

    /// The key Android's keystore vouched for, to keep.
    public init(_ key: AndroidAttestedKey, appID: AppID, attestID: AttestID, deviceID: DeviceID?, at time: Date) {
        let level: HardwareFacts.SecurityLevel =
            switch key.securityLevel {
            case .software: .software
            case .trustedEnvironment: .trustedEnvironment
            case .strongBox: .strongBox
            }
        self.init(
            appID: appID,
            keyID: Base64URL.encode(Array(SHA256.hash(data: Data(key.publicKey)))),
            platform: .androidKey,
            attestID: attestID,
            deviceID: deviceID,
            publicKey: key.publicKey,
            counter: 0,
            facts: HardwareFacts(
                app: key.packageName,
                securityLevel: level,
                verifiedBoot: key.rootOfTrust.map { $0.verifiedBootState == .verified },
                deviceLocked: key.rootOfTrust?.deviceLocked,
                osPatchLevel: key.osPatchLevel
            ),
            receipt: nil,
            attestedAt: time,
            lastUsedAt: time
        )
    }
}

/// What the hardware said about the device when its key was attested: what risk rules and tokens
/// may rely on, unlike what an SDK reports about itself.
public struct HardwareFacts: Equatable, Sendable, Codable {
    public enum SecurityLevel: String, Sendable, Codable {
        case secureEnclave = "secure_enclave"
        case strongBox = "strongbox"
        case trustedEnvironment = "tee"
        case software
    }

    /// The bundle identifier or package name the key belongs to.
    public let app: String
    public let securityLevel: SecurityLevel
    public let verifiedBoot: Bool?
    public let deviceLocked: Bool?
    /// YYYYMM.
    public let osPatchLevel: Int?
    /// App Attest's environment, `production` or `development`.
    public let environment: String?

    public init(
        app: String,
        securityLevel: SecurityLevel,
        verifiedBoot: Bool? = nil,
        deviceLocked: Bool? = nil,
        osPatchLevel: Int? = nil,
        environment: String? = nil
    ) {
        self.app = app
        self.securityLevel = securityLevel
        self.verifiedBoot = verifiedBoot
        self.deviceLocked = deviceLocked
        self.osPatchLevel = osPatchLevel
        self.environment = environment
    }
}
