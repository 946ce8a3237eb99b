/// What Google Play says of one request (developer.android.com/google/play/integrity/verdicts): the
/// payload of a classic token once decrypted and verified, or of a standard one as Google decodes it.
/// Fields Google adds later are ignored; a known field of another type refuses the whole verdict.
public struct PlayIntegrityVerdict: Sendable, Equatable {
    public var requestPackageName: String
    public var timestampMillis: Int64
    /// The classic request's nonce, as the app passed it.
    public var nonce: String?
    /// The standard request's hash, as the app passed it.
    public var requestHash: String?
    /// `PLAY_RECOGNIZED`, `UNRECOGNIZED_VERSION` or `UNEVALUATED`.
    public var appRecognition: String
    public var packageName: String?
    /// SHA-256 of the app's signing certificates, base64url without padding, as Play gives them.
    public var certificateDigests: [String]
    public var versionCode: Int64?
    /// `MEETS_BASIC_INTEGRITY`, `MEETS_DEVICE_INTEGRITY`, `MEETS_STRONG_INTEGRITY`, `MEETS_VIRTUAL_INTEGRITY`.
    public var deviceVerdicts: Set<String>
    /// `LEVEL_1` (lowest) to `LEVEL_4`, or `UNEVALUATED`, when the app asked for it.
    public var deviceActivityLevel: String?
    /// `LICENSED`, `UNLICENSED` or `UNEVALUATED`, when present.
    public var licensing: String?
    /// `KNOWN_INSTALLED`, `UNKNOWN_CAPTURING`, `UNKNOWN_CONTROLLING`, ... when the app asked for it.
    public var appsDetected: [String]?
    /// `NO_ISSUES`, `NO_DATA`, `POSSIBLE_RISK`, `MEDIUM_RISK`, `HIGH_RISK` or `UNEVALUATED`, when present.
    public var playProtect: String?

    /// At most this many entries in a list of the verdict: Play's have a handful.
    static let maximumListLength = 32

    /// The verdict in a payload, or nil when it is not one (a missing request, a field of another type).
    public static func parse(_ payload: [UInt8]) -> PlayIntegrityVerdict? {
        guard let root = JSONValue.parse(payload)?.object, let request = root["requestDetails"]?.object,
            let requestPackage = request["requestPackageName"]?.string, let millis = request["timestampMillis"].flatMap(integer),
            let app = root["appIntegrity"]?.object, let recognition = app["appRecognitionVerdict"]?.string
        else { return nil }
        var verdict = PlayIntegrityVerdict(requestPackageName: requestPackage, timestampMillis: millis, appRecognition: recognition)
        guard verdict.read(request: request, app: app), verdict.read(root) else { return nil }
        return verdict
    }

    /// The required fields; `read` fills in the rest.
    init(requestPackageName: String, timestampMillis: Int64, appRecognition: String) {
        self.requestPackageName = requestPackageName
        self.timestampMillis = timestampMillis
        self.appRecognition = appRecognition
        certificateDigests = []
        deviceVerdicts = []
    }

    /// The request's nonce or hash and the app's fields; false when one present is not what it must be.
    mutating func read(request: [String: JSONValue], app: [String: JSONValue]) -> Bool {
        guard let nonce = Self.optionalString(request["nonce"]), let hash = Self.optionalString(request["requestHash"]),
            let package = Self.optionalString(app["packageName"]), let digests = Self.strings(app["certificateSha256Digest"])
        else { return false }
        (self.nonce, requestHash, packageName, certificateDigests) = (nonce, hash, package, digests ?? [])
        if let version = app["versionCode"] {
            guard let number = Self.integer(version) else { return false }
            versionCode = number
        }
        return true
    }

    /// The device's, the account's and the environment's parts, each optional as a whole.
    mutating func read(_ root: [String: JSONValue]) -> Bool {
        let device = root["deviceIntegrity"]?.object ?? [:]
        let environment = root["environmentDetails"]?.object ?? [:]
        guard let verdicts = Self.strings(device["deviceRecognitionVerdict"]),
            let activity = Self.optionalString(device["recentDeviceActivity"]?.object?["deviceActivityLevel"]),
            let licensing = Self.optionalString(root["accountDetails"]?.object?["appLicensingVerdict"]),
            let apps = Self.strings(environment["appAccessRiskVerdict"]?.object?["appsDetected"]),
            let protect = Self.optionalString(environment["playProtectVerdict"])
        else { return false }
        (deviceVerdicts, deviceActivityLevel, self.licensing) = (Set(verdicts ?? []), activity, licensing)
        (appsDetected, playProtect) = (apps, protect)
        return true
    }

    /// Google's JSON writes 64-bit integers as strings of digits (proto3's mapping); either form is read.
    static func integer(_ value: JSONValue) -> Int64? {
        switch value {
        case .integer(let number): number
        case .string(let text): text.utf8.count <= 19 && text.utf8.allSatisfy({ (48...57).contains($0) }) ? Int64(text) : nil
        default: nil
        }
    }

    /// Absent (a value of nil), or a string; nil when present and not a string.
    static func optionalString(_ value: JSONValue?) -> String?? {
        guard let value else { return .some(nil) }
        guard case .string(let text) = value, text.utf8.count <= 512 else { return nil }
        return .some(text)
    }

    /// Absent (a value of nil), or a short list of strings; nil when present and anything else.
    static func strings(_ value: JSONValue?) -> [String]?? {
        guard let value else { return .some(nil) }
        guard case .array(let items) = value, items.count <= maximumListLength else { return nil }
        var texts: [String] = []
        for item in items {
            guard case .string(let text) = item, text.utf8.count <= 512 else { return nil }
            texts.append(text)
        }
        return .some(texts)
    }
}
