import Crypto
import Foundation

/// Which of an app's two secrets: the SDK's `secretKey`, or the server secret its backend uses.
public enum SecretKind: String, Sendable, CaseIterable {
    /// The 32-character `secretKey` compiled into the app (the device-risk SDK's init takes it).
    case sdk
    /// The app backend's credential for risk queries and token verification; never shipped in the app.
    case server

    public init(validating text: String) throws(DomainError) {
        guard let kind = SecretKind(rawValue: text) else {
            throw DomainError(.invalidSecretKind, "The secret kind is 'sdk' or 'server'.", field: "kind")
        }
        self = kind
    }

    /// Fresh plaintext of this kind's shape.
    public func generate<R: RandomNumberGenerator>(using generator: inout R) -> String {
        switch self {
        case .sdk: RandomText.make(length: 32, alphabet: RandomText.base62, using: &generator)
        case .server: "gsk_" + RandomText.make(length: 40, alphabet: RandomText.base62, using: &generator)
        }
    }
}

/// One version of one app secret as stored, with its lifetime. The SDK's `secretKey` is sealed with
/// the master key, since request signatures are checked with it. The server secret is only ever
/// compared, so it is kept as its SHA-256 (`verifier`, as admin tokens are) and no sealed copy: a
/// backend's request then costs a hash, not a decryption, and a database and master key that leak
/// together do not give it away. `sealed` is empty when there is no sealed copy; a server secret
/// stored before verifiers existed keeps its sealed copy until it is rotated (an instance of the
/// previous build, in a rolling upgrade, still reads it).
public struct SealedSecret: Equatable, Sendable {
    public let appID: AppID
    public let kind: SecretKind
    public let version: Int
    public let sealed: [UInt8]
    public let verifier: [UInt8]?
    public let createdAt: Date
    /// When this version stops verifying; nil while it is the current version.
    public var retiresAt: Date?

    public init(
        appID: AppID,
        kind: SecretKind,
        version: Int,
        sealed: [UInt8],
        verifier: [UInt8]? = nil,
        createdAt: Date,
        retiresAt: Date?
    ) {
        self.appID = appID
        self.kind = kind
        self.version = version
        self.sealed = sealed
        self.verifier = verifier
        self.createdAt = createdAt
        self.retiresAt = retiresAt
    }

    public func isLive(at now: Date) -> Bool {
        retiresAt.map { $0 > now } ?? true
    }

    /// Binds the ciphertext to its row: a sealed secret moved to another app, kind or version won't open.
    public static func sealingContext(appID: AppID, kind: SecretKind, version: Int) -> String {
        SealedValue.appSecretContext(appID: appID, kind: kind, version: version)
    }

    public static func seal(
        _ plaintext: String,
        appID: AppID,
        kind: SecretKind,
        version: Int,
        at now: Date,
        box: SecretBox
    ) -> SealedSecret {
        let context = sealingContext(appID: appID, kind: kind, version: version)
        guard kind == .sdk else {
            return SealedSecret(
                appID: appID,
                kind: kind,
                version: version,
                sealed: [],
                verifier: CredentialDigest.of(plaintext),
                createdAt: now,
                retiresAt: nil
            )
        }
        return SealedSecret(
            appID: appID,
            kind: kind,
            version: version,
            sealed: box.seal(Array(plaintext.utf8), context: context),
            createdAt: now,
            retiresAt: nil
        )
    }

    /// The plaintext of every live version of `kind`, by version; versions that do not open are skipped.
    public static func livePlaintexts(of kind: SecretKind, among secrets: [SealedSecret], at now: Date, box: SecretBox) -> [(Int, String)] {
        secrets.filter { $0.kind == kind && $0.isLive(at: now) }.compactMap { secret in
            (try? secret.open(with: box)).map { (secret.version, $0) }
        }
    }

    public func open(with box: SecretBox) throws(DomainError) -> String {
        guard !sealed.isEmpty else { throw DomainError(.sealedSecretUnreadable, "A server secret is kept as its hash only; it cannot be read back.") }
        let bytes = try box.open(sealed, context: Self.sealingContext(appID: appID, kind: kind, version: version))
        return String(decoding: bytes, as: UTF8.self)
    }
}

/// A freshly generated secret: the plaintext to show once, and what to store.
public struct IssuedSecret: Sendable {
    public let plaintext: String
    public let stored: SealedSecret
}

/// The decision of a secret rotation: the new version, and the new end of life of the older ones.
public struct SecretRotation: Sendable {
    /// Overlap windows run from none (the old secret stops at once) to 30 days.
    public static let overlapRange: ClosedRange<Int> = 0...2_592_000
    public static let defaultOverlapSeconds = 86_400

    public let issued: IssuedSecret
    /// Older versions whose `retiresAt` changes, by version.
    public let retirements: [Int: Date]

    /// At most two versions are ever live: the new one, and the one it replaces for `overlapSeconds`.
    /// Versions still inside an earlier overlap stop at once.
    public static func plan<R: RandomNumberGenerator>(
        app: App,
        kind: SecretKind,
        existing: [SealedSecret],
        overlapSeconds: Int,
        at now: Date,
        box: SecretBox,
        using generator: inout R
    ) throws(DomainError) -> SecretRotation {
        try app.requireChangeable()
        guard overlapRange.contains(overlapSeconds) else {
            throw DomainError(
                .invalidOverlap,
                "overlapSeconds is from 0 to 2592000 (30 days); \(overlapSeconds) is outside.",
                field: "overlapSeconds"
            )
        }
        var retirements: [Int: Date] = [:]
        let overlapEnd = now.addingTimeInterval(TimeInterval(overlapSeconds))
        for secret in existing where secret.kind == kind && secret.isLive(at: now) {
            retirements[secret.version] = secret.retiresAt == nil ? overlapEnd : now
        }
        let version = (existing.filter { $0.kind == kind }.map(\.version).max() ?? 0) + 1
        let plaintext = kind.generate(using: &generator)
        let stored = SealedSecret.seal(plaintext, appID: app.id, kind: kind, version: version, at: now, box: box)
        return SecretRotation(issued: IssuedSecret(plaintext: plaintext, stored: stored), retirements: retirements)
    }
}

/// Issues the first version of both secrets for a new app.
public func issueInitialSecrets<R: RandomNumberGenerator>(
    for app: App,
    at now: Date,
    box: SecretBox,
    using generator: inout R
) -> [SecretKind: IssuedSecret] {
    var issued: [SecretKind: IssuedSecret] = [:]
    for kind in SecretKind.allCases {
        let plaintext = kind.generate(using: &generator)
        issued[kind] = IssuedSecret(
            plaintext: plaintext,
            stored: .seal(plaintext, appID: app.id, kind: kind, version: 1, at: now, box: box)
        )
    }
    return issued
}

/// Answers "does this presented secret belong to the app right now?" over every live version.
public enum SecretVerifier {
    /// - Returns: the version that matched, or nil.
    public static func matchingVersion(
        of presented: String,
        kind: SecretKind,
        among secrets: [SealedSecret],
        at now: Date,
        box: SecretBox
    ) -> Int? {
        let presentedBytes = Array(presented.utf8)
        var matched: Int?
        // A server secret is compared as its hash: no decryption per request.
        if secrets.contains(where: { $0.kind == kind && $0.verifier != nil }) {
            let digest = CredentialDigest.of(presented)
            for secret in secrets where secret.kind == kind && secret.isLive(at: now) {
                if let verifier = secret.verifier, constantTimeEquals(verifier, digest) { matched = secret.version }
            }
        }
        // Every live version is compared, so the time taken does not say which one matched.
        let unhashed = secrets.filter { $0.verifier == nil }
        for (version, plaintext) in SealedSecret.livePlaintexts(of: kind, among: unhashed, at: now, box: box) {
            if constantTimeEquals(Array(plaintext.utf8), presentedBytes) { matched = version }
        }
        return matched
    }
}
