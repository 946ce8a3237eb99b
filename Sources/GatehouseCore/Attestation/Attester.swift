// Attestation: attesters, proof-of-work challenges, attestation tokens (JWT, token binding), the gate.
// Serves seeds 001 (HTTP 428, EO-Attest-Token) and 003 (Approov-Token, pay binding, dynamic configuration).
// Subfolders: Hardware (App Attest, Android key attestation), ProofOfWork, Tokens (JWS, attestation tokens, nonces).

import Foundation

/// How an attester tests the client: silent proof-of-work, the slider captcha, or both; or the
/// platform's hardware attestation (Apple App Attest, Android Key Attestation); or Google Play
/// Integrity's verdict, which Google's servers give about the device, the app and the account.
public enum AttesterKind: String, Sendable, Codable, CaseIterable {
    case pow
    case captcha
    case powAndCaptcha = "pow+captcha"
    case appAttest
    case androidKeyAttestation
    case playIntegrity

    public var asksForWork: Bool { self == .pow || self == .powAndCaptcha }
    public var asksForCaptcha: Bool { self == .captcha || self == .powAndCaptcha }
    /// The platform whose hardware attests the device, for the hardware kinds.
    public var hardwarePlatform: AttestedDeviceKey.Platform? {
        switch self {
        case .appAttest: .appAttest
        case .androidKeyAttestation: .androidKey
        case .pow, .captcha, .powAndCaptcha, .playIntegrity: nil
        }
    }
}

/// ALTCHA's two challenge formats: classic (SHA-256 over salt and a number) and v2 (PBKDF2/SHA-256).
public enum PowFormat: String, Sendable, Codable, CaseIterable {
    case altchaV1 = "altcha-v1"
    case altchaV2 = "altcha-v2"
}

/// How hard an attester's proof-of-work is before any risk adjustment.
public struct PowDifficulty: Equatable, Sendable {
    public static let maxNumberRange: ClosedRange<Int> = 1_000...100_000_000
    /// The server runs one PBKDF2 of `cost` iterations per verification (13 ms at 5,000 in a debug
    /// build here, 516 ms at 1,000,000), so the cost has a ceiling; harder challenges lengthen the prefix.
    public static let costRange: ClosedRange<Int> = 1...50_000
    public static let keyPrefixLength: ClosedRange<Int> = 1...8

    public var format: PowFormat
    /// Classic: the secret number is drawn from 0...maxNumber, so a solver tries maxNumber/2 hashes on average.
    public var maxNumber: Int
    /// v2: PBKDF2 iterations per attempt.
    public var cost: Int
    /// v2: the hex prefix the derived key must start with; each hex digit multiplies the attempts by 16.
    public var keyPrefix: String

    public static let standard = PowDifficulty(format: .altchaV1, maxNumber: 100_000, cost: 5_000, keyPrefix: "00")

    public init(format: PowFormat, maxNumber: Int, cost: Int, keyPrefix: String) {
        self.format = format
        self.maxNumber = maxNumber
        self.cost = cost
        self.keyPrefix = keyPrefix
    }

    func validated() throws(DomainError) -> PowDifficulty {
        guard Self.maxNumberRange.contains(maxNumber) else {
            throw DomainError(.invalidAttester, "pow.maxNumber is from 1000 to 100000000.", field: "pow.maxNumber")
        }
        guard Self.costRange.contains(cost) else {
            throw DomainError(
                .invalidAttester,
                "pow.cost is from 1 to 50000 PBKDF2 iterations; for more work, lengthen pow.keyPrefix.",
                field: "pow.cost"
            )
        }
        guard Self.keyPrefixLength.contains(keyPrefix.utf8.count),
            keyPrefix.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x61...0x66).contains($0) })
        else { throw DomainError(.invalidAttester, "pow.keyPrefix is 1 to 8 lower-case hex digits.", field: "pow.keyPrefix") }
        return self
    }
}

/// A route the attester gates: an HTTP method (or `*`) and a path prefix.
public struct ProtectedRoute: Equatable, Sendable, Codable {
    public static let methods: Set<String> = ["*", "GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    public let method: String
    public let pathPrefix: String

    public init(method: String, pathPrefix: String) throws(DomainError) {
        let upper = method.uppercased()
        guard Self.methods.contains(upper) else {
            throw DomainError(.invalidAttester, "A route's method is one of \(Self.methods.sorted().joined(separator: ", ")).", field: "routes")
        }
        guard pathPrefix.hasPrefix("/"), (1...512).contains(pathPrefix.utf8.count), !pathPrefix.contains("?"), !pathPrefix.contains("#"),
            pathPrefix.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
        else {
            throw DomainError(
                .invalidAttester,
                "A route's pathPrefix starts with / and is 1 to 512 printable ASCII characters, no query.",
                field: "routes"
            )
        }
        self.method = upper
        self.pathPrefix = pathPrefix
    }

    /// HEAD is gated as GET (an upstream answers it with GET's handler), and the prefix is compared
    /// without case, since some upstreams route `/API/` as `/api/`. A prefix ending in `/` also gates
    /// the path without that slash and with a format suffix (`/api` and `/api.json` for `/api/`):
    /// Express and others route `/api` as `/api/`, Rails reads `.json` as a format. Gating more than
    /// asked is safe, gating less is not.
    public func matches(method requestMethod: String, path: String) -> Bool {
        let requested = requestMethod.uppercased()
        guard method == "*" || method == requested || (method == "GET" && requested == "HEAD") else { return false }
        let (path, prefix) = (path.lowercased(), pathPrefix.lowercased())
        if path.hasPrefix(prefix) { return true }
        guard prefix.count > 1, prefix.hasSuffix("/") else { return false }
        let bare = prefix.dropLast()
        return path == bare || path.hasPrefix(bare + ".")
    }
}

/// The limits an attester's settings must keep (EdgeOne's, where it has them).
public enum AttesterPolicy {
    public static let tokenLifetime: ClosedRange<Int> = 60...43_200
    public static let challengeLifetime: ClosedRange<Int> = 30...3_600
    public static let maxUses: ClosedRange<Int> = 1...100_000
    public static let defaultTokenHeader = "EO-Attest-Token"
    /// Headers a token may not travel in: they mean something else to every proxy on the way.
    /// Headers that frame or forward a request, which proxies set or rewrite: never a token's or a
    /// credential's carrier.
    public static let reservedHeaders: Set<String> = [
        "host", "content-length", "content-type", "transfer-encoding", "connection", "cookie", "set-cookie", "te", "trailer", "upgrade",
        "keep-alive", "proxy-authorization", "x-forwarded-for", "x-real-ip", "x-request-id",
    ]

    static func checkedHeaderName(_ name: String, field: String) throws(DomainError) -> String {
        let tchar = Set("!#$%&'*+-.^_`|~0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".utf8)
        guard (1...64).contains(name.utf8.count), name.utf8.allSatisfy(tchar.contains), !reservedHeaders.contains(name.lowercased()) else {
            throw DomainError(.invalidAttester, "\(field) is an HTTP header name (1 to 64 token characters) that proxies leave alone.", field: field)
        }
        return name
    }
}

/// An attester's identity as callers name it: `attestId`, 3 to 64 of `a-z 0-9 -`, starting alphanumeric.
public struct AttestID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(validating text: String) throws(DomainError) {
        guard text.isSlug else {
            throw DomainError(.invalidAttestID, "attestId is 3 to 64 characters of a-z, 0-9 and -, not starting with -.", field: "attestId")
        }
        rawValue = text
    }

    public var description: String { rawValue }
}

public enum AttesterStatus: String, Sendable, Codable {
    case active, disabled
}

/// An attestation policy: what the client must prove, what it gets, and which routes it opens.
public struct Attester: Equatable, Sendable {
    public let appID: AppID
    public let attestID: AttestID
    public var kind: AttesterKind
    public var pow: PowDifficulty
    /// Raise the proof-of-work for devices whose recent risk is high (docs/attestation.md, the curve).
    public var adaptive: Bool
    public var challengeLifetimeSeconds: Int
    public var tokenLifetimeSeconds: Int
    public var tokenHeader: String
    /// How many requests one token may open; nil means any number until it expires.
    public var maxUses: Int?
    public var algorithm: JWSAlgorithm
    /// The request header whose value the token must be bound to (the `pay` claim), if any.
    public var bindHeader: String?
    /// Whether the gate also requires a valid request signature (`wToken`) on the routes it opens.
    public var requireSignature: Bool
    /// What an `appAttest` attester accepts (nil for every other kind).
    public var appAttest: AppAttestPolicy?
    /// What an `androidKeyAttestation` attester accepts (nil for every other kind).
    public var androidKeyAttestation: AndroidKeyAttestationPolicy?
    /// What a `playIntegrity` attester accepts and how it reads tokens (nil for every other kind).
    public var playIntegrity: PlayIntegritySettings?
    /// For an attester that requires hardware: a Play Integrity verdict it takes instead, read by the
    /// named `playIntegrity` attester, at the lowest level named. Nil: hardware only.
    public var acceptPlayIntegrity: PlayIntegrityAcceptance?
    /// Tokens only for a device that proves a hardware-attested key (an assertion with every
    /// request for a token), and the gate opens only to such tokens. Always so for the hardware kinds.
    public var requireHardwareAttestation: Bool
    public var routes: [ProtectedRoute]
    public var status: AttesterStatus
    /// In `monitor` the gate lets every request through and says what it found (`AttesterEnforcement`).
    public var enforcement: AttesterEnforcement = .enforce
    public let createdAt: Date
    public var updatedAt: Date

    public init(
        appID: AppID,
        attestID: AttestID,
        kind: AttesterKind = .pow,
        pow: PowDifficulty = .standard,
        adaptive: Bool = true,
        challengeLifetimeSeconds: Int = 300,
        tokenLifetimeSeconds: Int = 300,
        tokenHeader: String = AttesterPolicy.defaultTokenHeader,
        maxUses: Int? = nil,
        algorithm: JWSAlgorithm = .es256,
        bindHeader: String? = nil,
        requireSignature: Bool = false,
        appAttest: AppAttestPolicy? = nil,
        androidKeyAttestation: AndroidKeyAttestationPolicy? = nil,
        requireHardwareAttestation: Bool = false,
        routes: [ProtectedRoute] = [],
        status: AttesterStatus = .active,
        createdAt: Date,
        updatedAt: Date
    ) {
        self.appID = appID
        self.attestID = attestID
        self.kind = kind
        self.pow = pow
        self.adaptive = adaptive
        self.challengeLifetimeSeconds = challengeLifetimeSeconds
        self.tokenLifetimeSeconds = tokenLifetimeSeconds
        self.tokenHeader = tokenHeader
        self.maxUses = maxUses
        self.algorithm = algorithm
        self.bindHeader = bindHeader
        self.requireSignature = requireSignature
        self.appAttest = appAttest
        self.androidKeyAttestation = androidKeyAttestation
        self.requireHardwareAttestation = requireHardwareAttestation
        self.routes = routes
        self.status = status
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// Checks every setting against `AttesterPolicy`; the store keeps only validated attesters.
    public func validated() throws(DomainError) -> Attester {
        var checked = self
        checked.pow = try pow.validated()
        guard AttesterPolicy.challengeLifetime.contains(challengeLifetimeSeconds) else {
            throw DomainError(.invalidAttester, "challengeLifetimeSeconds is from 30 to 3600.", field: "challengeLifetimeSeconds")
        }
        guard AttesterPolicy.tokenLifetime.contains(tokenLifetimeSeconds) else {
            throw DomainError(.invalidAttester, "tokenLifetimeSeconds is from 60 (1 minute) to 43200 (12 hours).", field: "tokenLifetimeSeconds")
        }
        if let maxUses, !AttesterPolicy.maxUses.contains(maxUses) {
            throw DomainError(.invalidAttester, "maxUses is from 1 to 100000, or absent for unlimited use until expiry.", field: "maxUses")
        }
        checked.tokenHeader = try AttesterPolicy.checkedHeaderName(tokenHeader, field: "tokenHeader")
        if let bindHeader {
            checked.bindHeader = try AttesterPolicy.checkedHeaderName(bindHeader, field: "bindHeader")
            guard bindHeader.lowercased() != tokenHeader.lowercased() else {
                throw DomainError(.invalidAttester, "bindHeader must differ from tokenHeader.", field: "bindHeader")
            }
        }
        guard routes.count <= 50 else { throw DomainError(.invalidAttester, "An attester gates at most 50 routes.", field: "routes") }
        // A hardware kind carries its own settings and no other's; the others carry none.
        guard (kind == .appAttest) == (appAttest != nil) else {
            throw DomainError(.invalidAttester, "appAttest settings go with kind appAttest, and only with it.", field: "appAttest")
        }
        try checkPlayIntegrity()
        guard (kind == .androidKeyAttestation) == (androidKeyAttestation != nil) else {
            throw DomainError(
                .invalidAttester,
                "androidKeyAttestation settings go with kind androidKeyAttestation, and only with it.",
                field: "androidKeyAttestation"
            )
        }
        if kind.hardwarePlatform != nil { checked.requireHardwareAttestation = true }
        return checked
    }

    /// Whether this attester's tokens and gate stand on a hardware-attested device key.
    public var requiresHardware: Bool { requireHardwareAttestation || kind.hardwarePlatform != nil }

    /// What the audit log records of an attester (never its HS256 secret nor its Play Integrity credentials).
    public var snapshot: AuditSnapshot {
        [
            "kind": .string(kind.rawValue), "powFormat": .string(pow.format.rawValue), "maxNumber": .int(pow.maxNumber), "cost": .int(pow.cost),
            "keyPrefix": .string(pow.keyPrefix), "adaptive": .string(String(adaptive)),
            "challengeLifetimeSeconds": .int(challengeLifetimeSeconds), "tokenLifetimeSeconds": .int(tokenLifetimeSeconds),
            "tokenHeader": .string(tokenHeader), "maxUses": maxUses.map(AuditValue.int) ?? .null, "algorithm": .string(algorithm.rawValue),
            "bindHeader": bindHeader.map(AuditValue.string) ?? .null, "requireSignature": .string(String(requireSignature)),
            "routes": .strings(routes.map { "\($0.method) \($0.pathPrefix)" }),
            "status": .string(status.rawValue), "enforcement": .string(enforcement.rawValue),
            "requireHardwareAttestation": .string(String(requireHardwareAttestation)),
            "appAttest": appAttest.map { .strings($0.summary) } ?? .null,
            "androidKeyAttestation": androidKeyAttestation.map { .strings($0.summary) } ?? .null,
            "playIntegrity": playIntegrity.map { .strings($0.summary) } ?? .null,
            "acceptPlayIntegrity": acceptPlayIntegrity.map { .string("\($0.attestID) \($0.minimumIntegrity.rawValue)") } ?? .null,
        ]
    }
}
