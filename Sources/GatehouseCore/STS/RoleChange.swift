import Foundation

/// An operator's create or update of a role, as sent: every field optional (an update changes only
/// what it names). An empty `policyTemplate`, `externalId` or `storageEndpoint` removes it, since
/// the API refuses JSON null. The key pair is not here: it is sealed and stored on its own.
public struct RoleChange: Sendable, Equatable {
    public var provider: String?
    public var stsEndpoint: String?
    public var region: String?
    public var roleArn: String?
    public var externalID: String?
    public var durationSeconds: Int?
    public var maxDurationSeconds: Int?
    public var policyTemplate: String?
    public var storageEndpoint: String?
    public var addressing: String?
    public var attestID: String?
    public var requireRiskDecision: Bool?
    public var requireHardwareAttestation: Bool?
    /// `basic`, `device` or `strong`; `none` for hardware only.
    public var acceptPlayIntegrity: String?
    public var selfSigned: Bool?
    public var status: String?

    public init() {}

    /// A new role from a create request: provider, endpoint, region, roleArn and attestId are required.
    public func created(appID: AppID, roleID: RoleID, at now: Date) throws(DomainError) -> STSRole {
        guard let provider, let stsEndpoint, let region, let roleArn, let attestID else {
            throw DomainError(.invalidRole, "A role needs provider, stsEndpoint, region, roleArn and attestId.", field: "provider")
        }
        let role = STSRole(
            appID: appID,
            roleID: roleID,
            provider: try Self.provider(provider),
            stsEndpoint: stsEndpoint,
            region: region,
            roleArn: roleArn,
            attestID: try AttestID(validating: attestID),
            createdAt: now
        )
        return try applied(to: role, at: now)
    }

    /// `role` with this change applied and validated.
    public func applied(to role: STSRole, at now: Date) throws(DomainError) -> STSRole {
        var updated = role
        if let provider { updated.provider = try Self.provider(provider) }
        if let stsEndpoint { updated.stsEndpoint = stsEndpoint }
        if let region { updated.region = region }
        if let roleArn { updated.roleArn = roleArn }
        if let externalID { updated.externalID = externalID.isEmpty ? nil : externalID }
        if let durationSeconds { updated.durationSeconds = durationSeconds }
        if let maxDurationSeconds { updated.maxDurationSeconds = maxDurationSeconds }
        if let policyTemplate { updated.policyTemplate = policyTemplate.isEmpty ? nil : policyTemplate }
        if let storageEndpoint { updated.storageEndpoint = storageEndpoint.isEmpty ? nil : storageEndpoint }
        if let addressing {
            guard let parsed = StorageEndpoint.Addressing(rawValue: addressing) else {
                throw DomainError(.invalidRole, "addressing is virtual or path.", field: "addressing")
            }
            updated.addressing = parsed
        }
        if let attestID { updated.attestID = try AttestID(validating: attestID) }
        if let requireRiskDecision { updated.requireRiskDecision = requireRiskDecision }
        if let requireHardwareAttestation { updated.requireHardwareAttestation = requireHardwareAttestation }
        if let acceptPlayIntegrity {
            guard acceptPlayIntegrity == "none" || ["basic", "device", "strong"].contains(acceptPlayIntegrity) else {
                throw DomainError(.invalidRole, "acceptPlayIntegrity is basic, device, strong or none.", field: "acceptPlayIntegrity")
            }
            updated.acceptPlayIntegrity = PlayIntegrityLevel(rawValue: acceptPlayIntegrity)
        }
        if !updated.requireHardwareAttestation { updated.acceptPlayIntegrity = nil }
        if let selfSigned { updated.selfSigned = selfSigned }
        if let status {
            guard let parsed = RoleStatus(rawValue: status) else {
                throw DomainError(.invalidRole, "status is active or disabled.", field: "status")
            }
            updated.status = parsed
        }
        updated.updatedAt = now
        return try updated.validated()
    }

    private static func provider(_ text: String) throws(DomainError) -> STSProvider {
        guard let provider = STSProvider(rawValue: text) else {
            throw DomainError(.invalidRole, "provider is aws or alibaba.", field: "provider")
        }
        return provider
    }
}

/// The long-term key pair a role calls its STS with. Sealed at rest; never returned.
public struct UpstreamKey: Equatable, Sendable, Codable {
    public let accessKeyID: String
    public let accessKeySecret: String

    public init(accessKeyID: String, accessKeySecret: String) throws(DomainError) {
        let printable: (String) -> Bool = { $0.unicodeScalars.allSatisfy { $0.value > 0x20 && $0.value < 0x7F } }
        guard (3...128).contains(accessKeyID.utf8.count), printable(accessKeyID) else {
            throw DomainError(.invalidRole, "accessKeyId is 3 to 128 printable ASCII characters.", field: "accessKeyId")
        }
        guard (8...256).contains(accessKeySecret.utf8.count), printable(accessKeySecret) else {
            throw DomainError(.invalidRole, "accessKeySecret is 8 to 256 printable ASCII characters.", field: "accessKeySecret")
        }
        self.accessKeyID = accessKeyID
        self.accessKeySecret = accessKeySecret
    }
}
