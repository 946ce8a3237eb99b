import Foundation

/// How far Google vouches for the device, lowest first: `virtual` is an emulator Google recognises
/// (`MEETS_VIRTUAL_INTEGRITY`), which an operator accepts only where emulators are allowed.
public enum PlayIntegrityLevel: String, Sendable, Codable, CaseIterable, Comparable {
    case virtual, basic, device, strong

    /// The highest level the device's verdicts meet, nil when they meet none.
    public static func met(by verdicts: Set<String>) -> PlayIntegrityLevel? {
        if verdicts.contains("MEETS_STRONG_INTEGRITY") { return .strong }
        if verdicts.contains("MEETS_DEVICE_INTEGRITY") { return .device }
        if verdicts.contains("MEETS_BASIC_INTEGRITY") { return .basic }
        if verdicts.contains("MEETS_VIRTUAL_INTEGRITY") { return .virtual }
        return nil
    }

    var rank: Int { Self.allCases.firstIndex(of: self) ?? 0 }

    public static func < (left: PlayIntegrityLevel, right: PlayIntegrityLevel) -> Bool { left.rank < right.rank }
}

/// What an operator accepts of a Play Integrity verdict for one app.
public struct PlayIntegrityPolicy: Sendable, Equatable, Codable {
    public var packageName: String
    /// The app's signing certificates' SHA-256, base64url without padding (as Play Console shows them).
    public var certificateDigests: [String]
    /// The lowest device verdict accepted: `basic`, `device` or `strong`.
    public var minimumIntegrity: PlayIntegrityLevel
    /// Whether `MEETS_VIRTUAL_INTEGRITY` (Google's recognised emulators) is accepted.
    public var allowVirtual: Bool
    public var requirePlayRecognized: Bool
    public var requireLicensed: Bool
    /// The oldest verdict accepted, by its `timestampMillis`.
    public var maximumAgeSeconds: Int

    public init(
        packageName: String,
        certificateDigests: [String],
        minimumIntegrity: PlayIntegrityLevel = .device,
        allowVirtual: Bool = false,
        requirePlayRecognized: Bool = true,
        requireLicensed: Bool = false,
        maximumAgeSeconds: Int = 300
    ) {
        self.packageName = packageName
        self.certificateDigests = certificateDigests
        self.minimumIntegrity = minimumIntegrity
        self.allowVirtual = allowVirtual
        self.requirePlayRecognized = requirePlayRecognized
        self.requireLicensed = requireLicensed
        self.maximumAgeSeconds = maximumAgeSeconds
    }

    /// What the request must echo: the classic request's nonce or the standard request's hash.
    public enum Expected: Sendable, Equatable {
        case nonce(String)
        case requestHash(String)
    }

    /// A verdict's clocks may run ahead of ours by this much.
    public static let clockSkew: TimeInterval = 60

    /// The verdict checked in the order docs/attestation.md gives; the first check that fails refuses it.
    public func judge(_ verdict: PlayIntegrityVerdict, expected: Expected, at now: Date) -> Result<PlayIntegrityFacts, PlayIntegrityRefusal> {
        switch assess(verdict, expected: expected, at: now) {
        case .accepted(let facts): .success(facts)
        case .refused(let refusal), .refusedDevice(_, let refusal): .failure(refusal)
        }
    }

    /// What a verdict means for the device: accepted; refused for what it says of this request's app or
    /// device (its facts are still the device's own, since the request and its nonce are this device's);
    /// or refused before it says anything of this device (another package, nonce or time).
    public enum Assessment: Sendable, Equatable {
        case accepted(PlayIntegrityFacts)
        case refusedDevice(PlayIntegrityFacts, PlayIntegrityRefusal)
        case refused(PlayIntegrityRefusal)
    }

    public func assess(_ verdict: PlayIntegrityVerdict, expected: Expected, at now: Date) -> Assessment {
        guard verdict.requestPackageName == packageName else { return .refused(.wrongPackage) }
        switch expected {
        case .nonce(let nonce): guard verdict.nonce == nonce else { return .refused(.wrongNonce) }
        case .requestHash(let hash): guard verdict.requestHash == hash else { return .refused(.wrongNonce) }
        }
        let issued = Date(timeIntervalSince1970: Double(verdict.timestampMillis) / 1000)
        guard now.timeIntervalSince(issued) <= Double(maximumAgeSeconds), issued.timeIntervalSince(now) <= Self.clockSkew else {
            return .refused(.stale)
        }
        let level = PlayIntegrityLevel.met(by: verdict.deviceVerdicts)
        if let refusal = deviceRefusal(verdict, level: level) {
            return .refusedDevice(PlayIntegrityFacts(verdict, level: level, refusal: refusal), refusal)
        }
        return .accepted(PlayIntegrityFacts(verdict, level: level, refusal: nil))
    }

    private func deviceRefusal(_ verdict: PlayIntegrityVerdict, level: PlayIntegrityLevel?) -> PlayIntegrityRefusal? {
        if requirePlayRecognized, verdict.appRecognition != "PLAY_RECOGNIZED" { return .unrecognizedApp }
        if verdict.appRecognition != "UNEVALUATED" {
            guard verdict.packageName == packageName, verdict.certificateDigests.contains(where: certificateDigests.contains) else {
                return .wrongCertificate
            }
        }
        guard let level, level >= minimumIntegrity || (level == .virtual && allowVirtual) else { return .integrityTooLow }
        if requireLicensed, verdict.licensing != "LICENSED" { return .unlicensed }
        return nil
    }
}

/// Why a Play Integrity token was refused.
public enum PlayIntegrityRefusal: String, Error, Sendable, CaseIterable, Codable {
    /// Not a token of the form Play issues, or too large.
    case malformed
    /// The app's decryption key does not open it, or it was altered.
    case undecryptable
    /// Not signed ES256 by the app's verification key.
    case badSignature = "bad_signature"
    case wrongPackage = "wrong_package"
    /// Not the nonce (classic) or request hash (standard) of this challenge.
    case wrongNonce = "wrong_nonce"
    /// Older than the attester's largest age, or from the future.
    case stale
    case unrecognizedApp = "unrecognized_app"
    case wrongCertificate = "wrong_certificate"
    case integrityTooLow = "integrity_too_low"
    case unlicensed
}

/// What a verdict says of the device, for its row, the risk tags and the rules' `device.playIntegrity`.
public struct PlayIntegrityFacts: Sendable, Equatable, Codable {
    /// The highest level the device met; nil when it met none.
    public let integrity: PlayIntegrityLevel?
    public let appRecognition: String
    public let licensing: String?
    public let deviceActivityLevel: String?
    public let appsDetected: [String]
    public let playProtect: String?
    public let versionCode: Int64?
    /// Why the attester refused the verdict, when it did.
    public let refusal: PlayIntegrityRefusal?

    init(_ verdict: PlayIntegrityVerdict, level: PlayIntegrityLevel?, refusal: PlayIntegrityRefusal?) {
        self.init(
            integrity: level,
            appRecognition: verdict.appRecognition,
            licensing: verdict.licensing,
            deviceActivityLevel: verdict.deviceActivityLevel,
            appsDetected: verdict.appsDetected ?? [],
            playProtect: verdict.playProtect,
            versionCode: verdict.versionCode,
            refusal: refusal
        )
    }

    /// An app that captures the screen or controls the device is running (`UNKNOWN_CAPTURING`,
    /// `UNKNOWN_CONTROLLING`).
    public var riskyApps: Bool { appsDetected.contains { $0 == "UNKNOWN_CAPTURING" || $0 == "UNKNOWN_CONTROLLING" } }

    public init(
        integrity: PlayIntegrityLevel?,
        appRecognition: String,
        licensing: String? = nil,
        deviceActivityLevel: String? = nil,
        appsDetected: [String] = [],
        playProtect: String? = nil,
        versionCode: Int64? = nil,
        refusal: PlayIntegrityRefusal? = nil
    ) {
        self.integrity = integrity
        self.appRecognition = appRecognition
        self.licensing = licensing
        self.deviceActivityLevel = deviceActivityLevel
        self.appsDetected = appsDetected
        self.playProtect = playProtect
        self.versionCode = versionCode
        self.refusal = refusal
    }
}
