/// A value sealed with the master key, named by the row it belongs to. The row's identity is the
/// sealing context (AES-GCM associated data), so a ciphertext copied into another row does not open;
/// this is the one place those contexts are spelled.
public enum SealedValue: Equatable, Sendable {
    case appSecret(appID: AppID, kind: SecretKind, version: Int, sealed: [UInt8])
    case attesterSecret(appID: AppID, attestID: String, sealed: [UInt8])
    /// A `playIntegrity` attester's response keys and service account, one sealed JSON.
    case attesterCredentials(appID: AppID, attestID: String, sealed: [UInt8])
    case signingKey(kid: String, sealed: [UInt8])
    case roleKey(appID: AppID, roleID: String, sealed: [UInt8])

    public var sealed: [UInt8] {
        switch self {
        case .appSecret(_, _, _, let sealed), .attesterSecret(_, _, let sealed), .attesterCredentials(_, _, let sealed), .signingKey(_, let sealed),
            .roleKey(_, _, let sealed):
            sealed
        }
    }

    public var context: String {
        switch self {
        case .appSecret(let appID, let kind, let version, _): Self.appSecretContext(appID: appID, kind: kind, version: version)
        case .attesterSecret(let appID, let attestID, _): Self.attesterSecretContext(appID: appID, attestID: attestID)
        case .attesterCredentials(let appID, let attestID, _): Self.attesterCredentialsContext(appID: appID, attestID: attestID)
        case .signingKey(let kid, _): Self.signingKeyContext(kid: kid)
        case .roleKey(let appID, let roleID, _): Self.roleKeyContext(appID: appID, roleID: roleID)
        }
    }

    /// The same row's value sealed anew.
    public func replacing(_ sealed: [UInt8]) -> SealedValue {
        switch self {
        case .appSecret(let appID, let kind, let version, _): .appSecret(appID: appID, kind: kind, version: version, sealed: sealed)
        case .attesterSecret(let appID, let attestID, _): .attesterSecret(appID: appID, attestID: attestID, sealed: sealed)
        case .attesterCredentials(let appID, let attestID, _): .attesterCredentials(appID: appID, attestID: attestID, sealed: sealed)
        case .signingKey(let kid, _): .signingKey(kid: kid, sealed: sealed)
        case .roleKey(let appID, let roleID, _): .roleKey(appID: appID, roleID: roleID, sealed: sealed)
        }
    }

    public static func appSecretContext(appID: AppID, kind: SecretKind, version: Int) -> String { "app-secret:\(appID):\(kind.rawValue):\(version)" }
    public static func attesterSecretContext(appID: AppID, attestID: String) -> String { "attester:\(appID):\(attestID)" }
    public static func attesterCredentialsContext(appID: AppID, attestID: String) -> String { "attester-credentials:\(appID):\(attestID)" }
    public static func signingKeyContext(kid: String) -> String { "signing-key:\(kid)" }
    public static func roleKeyContext(appID: AppID, roleID: String) -> String { "role-key:\(appID):\(roleID)" }
}

/// Moving every sealed value from one master key to another: each must open with the current key
/// (or nothing changes), and is sealed again for the same row with the new one.
public struct MasterKeyRotation: Sendable {
    public let current: SecretBox
    public let next: SecretBox

    public init(current: SecretBox, next: SecretBox) throws(DomainError) {
        guard !current.hasSameKey(as: next) else {
            throw DomainError(.masterKeyInvalid, "The new master key is the current one.")
        }
        self.current = current
        self.next = next
    }

    public func reseal(_ value: SealedValue) throws(DomainError) -> SealedValue {
        value.replacing(next.seal(try current.open(value.sealed, context: value.context), context: value.context))
    }
}
