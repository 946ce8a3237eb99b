import Foundation

/// An operator's create or update of an attester, as sent: every field optional (an update changes
/// only what it names). `maxUses: 0` means unlimited and `bindHeader: ""` means no binding, since
/// the API refuses JSON null.
public struct AttesterChange: Sendable, Equatable {
    public var kind: String?
    public var powFormat: String?
    public var maxNumber: Int?
    public var cost: Int?
    public var keyPrefix: String?
    public var adaptive: Bool?
    public var challengeLifetimeSeconds: Int?
    public var tokenLifetimeSeconds: Int?
    public var tokenHeader: String?
    public var maxUses: Int?
    public var algorithm: String?
    public var bindHeader: String?
    public var requireSignature: Bool?
    public var routes: [(method: String, pathPrefix: String)]?
    public var status: String?
    public var enforcement: String?
    /// Whole settings, replacing the attester's (checked by `AppAttestPolicy.validated`).
    public var appAttest: AppAttestPolicy?
    public var androidKeyAttestation: AndroidKeyAttestationPolicy?
    public var requireHardwareAttestation: Bool?
    /// Whole settings, replacing the attester's; the secrets travel apart, in `playIntegrityCredentials`
    /// (what is not sent is kept, `PlayIntegrityCredentials.merged`).
    public var playIntegrity: PlayIntegritySettings?
    public var playIntegrityCredentials: PlayIntegrityCredentials?
    /// Nil: unchanged; `.some(nil)`: hardware only again.
    public var acceptPlayIntegrity: PlayIntegrityAcceptance??

    public init() {}

    public static func == (lhs: AttesterChange, rhs: AttesterChange) -> Bool {
        lhs.kind == rhs.kind && lhs.powFormat == rhs.powFormat && lhs.maxNumber == rhs.maxNumber && lhs.cost == rhs.cost
            && lhs.keyPrefix == rhs.keyPrefix && lhs.adaptive == rhs.adaptive && lhs.challengeLifetimeSeconds == rhs.challengeLifetimeSeconds
            && lhs.tokenLifetimeSeconds == rhs.tokenLifetimeSeconds && lhs.tokenHeader == rhs.tokenHeader && lhs.maxUses == rhs.maxUses
            && lhs.algorithm == rhs.algorithm && lhs.bindHeader == rhs.bindHeader && lhs.status == rhs.status
            && lhs.requireSignature == rhs.requireSignature && lhs.enforcement == rhs.enforcement && lhs.appAttest == rhs.appAttest
            && lhs.androidKeyAttestation == rhs.androidKeyAttestation && lhs.requireHardwareAttestation == rhs.requireHardwareAttestation
            && lhs.playIntegrity == rhs.playIntegrity && lhs.playIntegrityCredentials == rhs.playIntegrityCredentials
            && lhs.acceptPlayIntegrity == rhs.acceptPlayIntegrity
            && lhs.routes?.map { "\($0.method) \($0.pathPrefix)" } == rhs.routes?.map { "\($0.method) \($0.pathPrefix)" }
    }

    /// `attester` with this change applied and validated.
    public func applied(to attester: Attester, at now: Date) throws(DomainError) -> Attester {
        var updated = attester
        try applyKind(to: &updated, from: attester)
        if let powFormat {
            guard let parsed = PowFormat(rawValue: powFormat) else {
                throw DomainError(.invalidAttester, "pow.format is altcha-v1 or altcha-v2.", field: "pow.format")
            }
            updated.pow.format = parsed
        }
        if let maxNumber { updated.pow.maxNumber = maxNumber }
        if let cost { updated.pow.cost = cost }
        if let keyPrefix { updated.pow.keyPrefix = keyPrefix }
        if let adaptive { updated.adaptive = adaptive }
        if let challengeLifetimeSeconds { updated.challengeLifetimeSeconds = challengeLifetimeSeconds }
        if let tokenLifetimeSeconds { updated.tokenLifetimeSeconds = tokenLifetimeSeconds }
        if let tokenHeader { updated.tokenHeader = tokenHeader }
        if let maxUses { updated.maxUses = maxUses == 0 ? nil : maxUses }
        if let algorithm {
            guard let parsed = JWSAlgorithm(rawValue: algorithm) else {
                throw DomainError(.invalidAttester, "algorithm is ES256 or HS256.", field: "algorithm")
            }
            updated.algorithm = parsed
        }
        if let bindHeader { updated.bindHeader = bindHeader.isEmpty ? nil : bindHeader }
        if let requireSignature { updated.requireSignature = requireSignature }
        if let routes {
            var parsed: [ProtectedRoute] = []
            for route in routes { parsed.append(try ProtectedRoute(method: route.method, pathPrefix: route.pathPrefix)) }
            updated.routes = parsed
        }
        if let status {
            guard let parsed = AttesterStatus(rawValue: status) else {
                throw DomainError(.invalidAttester, "status is active or disabled.", field: "status")
            }
            updated.status = parsed
        }
        if let enforcement {
            guard let parsed = AttesterEnforcement(rawValue: enforcement) else {
                throw DomainError(.invalidAttester, "enforcement is enforce or monitor.", field: "enforcement")
            }
            updated.enforcement = parsed
        }
        updated.updatedAt = now
        return try updated.validated()
    }

    /// The kind and the hardware settings, which go together: leaving a hardware kind drops its
    /// settings (a change that names them anyway is refused by validation).
    private func applyKind(to updated: inout Attester, from attester: Attester) throws(DomainError) {
        if let kind {
            guard let parsed = AttesterKind(rawValue: kind) else {
                throw DomainError(
                    .invalidAttester,
                    "kind is pow, captcha, pow+captcha, appAttest, androidKeyAttestation or playIntegrity.",
                    field: "kind"
                )
            }
            if parsed != .appAttest { updated.appAttest = nil }
            if parsed != .androidKeyAttestation { updated.androidKeyAttestation = nil }
            if parsed != .playIntegrity { updated.playIntegrity = nil }
            if attester.kind.hardwarePlatform != nil, parsed.hardwarePlatform == nil { updated.requireHardwareAttestation = false }
            updated.kind = parsed
        }
        if let appAttest { updated.appAttest = appAttest }
        if let androidKeyAttestation { updated.androidKeyAttestation = androidKeyAttestation }
        if let playIntegrity { updated.playIntegrity = playIntegrity }
        if let acceptPlayIntegrity { updated.acceptPlayIntegrity = acceptPlayIntegrity }
        if let requireHardwareAttestation {
            guard requireHardwareAttestation || updated.kind.hardwarePlatform == nil else {
                throw DomainError(
                    .invalidAttester,
                    "A hardware attester always requires hardware attestation.",
                    field: "requireHardwareAttestation"
                )
            }
            updated.requireHardwareAttestation = requireHardwareAttestation
        }
        // Leaving hardware behind drops what stood in for it, unless the change names it (then refused).
        if !updated.requiresHardware, acceptPlayIntegrity == nil { updated.acceptPlayIntegrity = nil }
    }
}
