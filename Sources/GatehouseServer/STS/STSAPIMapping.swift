import Foundation
import GatehouseAPI
import GatehouseCore

/// The fields a role's create and update requests share, so that one mapping reads both.
protocol RoleFields {
    var provider: Components.Schemas.STSProvider? { get }
    var stsEndpoint: String? { get }
    var region: String? { get }
    var roleArn: String? { get }
    var externalId: String? { get }
    var durationSeconds: Int? { get }
    var maxDurationSeconds: Int? { get }
    var policyTemplate: String? { get }
    var storageEndpoint: String? { get }
    var addressing: Components.Schemas.StorageAddressing? { get }
    var attestId: Components.Schemas.AttestID? { get }
    var requireRiskDecision: Bool? { get }
    var requireHardwareAttestation: Bool? { get }
    var acceptPlayIntegrityName: String? { get }
    var selfSigned: Bool? { get }
    var accessKeyId: String? { get }
    var accessKeySecret: String? { get }
}

extension Components.Schemas.RoleCreate: RoleFields {
    var acceptPlayIntegrityName: String? { acceptPlayIntegrity?.rawValue }
}

extension Components.Schemas.RoleUpdate: RoleFields {
    var acceptPlayIntegrityName: String? { acceptPlayIntegrity?.rawValue }
}

extension RoleChange {
    init(_ body: some RoleFields) {
        self.init()
        provider = body.provider?.rawValue
        stsEndpoint = body.stsEndpoint
        region = body.region
        roleArn = body.roleArn
        externalID = body.externalId
        durationSeconds = body.durationSeconds
        maxDurationSeconds = body.maxDurationSeconds
        policyTemplate = body.policyTemplate
        storageEndpoint = body.storageEndpoint
        addressing = body.addressing?.rawValue
        attestID = body.attestId
        requireRiskDecision = body.requireRiskDecision
        requireHardwareAttestation = body.requireHardwareAttestation
        acceptPlayIntegrity = body.acceptPlayIntegrityName
        selfSigned = body.selfSigned
    }

    /// The new key pair, when the request names one (both halves, or neither).
    static func key(_ body: some RoleFields) throws -> UpstreamKey? {
        switch (body.accessKeyId, body.accessKeySecret) {
        case (nil, nil): return nil
        case (let id?, let secret?): return try UpstreamKey(accessKeyID: id, accessKeySecret: secret)
        default: throw DomainError(.invalidRole, "accessKeyId and accessKeySecret are replaced together.", field: "accessKeyId")
        }
    }
}

extension Components.Schemas.Role {
    init(_ role: STSRole, appKey: AppKey) {
        self.init(
            appKey: appKey.rawValue,
            roleId: role.roleID.rawValue,
            provider: role.provider == .aws ? .aws : .alibaba,
            stsEndpoint: role.stsEndpoint,
            region: role.region,
            roleArn: role.roleArn,
            externalId: role.externalID,
            durationSeconds: role.durationSeconds,
            maxDurationSeconds: role.maxDurationSeconds,
            policyTemplate: role.policyTemplate,
            storageEndpoint: role.storageEndpoint,
            addressing: role.addressing == .virtual ? .virtual : .path,
            attestId: role.attestID.rawValue,
            requireRiskDecision: role.requireRiskDecision,
            requireHardwareAttestation: role.requireHardwareAttestation,
            acceptPlayIntegrity: role.acceptPlayIntegrity.flatMap { .init(rawValue: $0.rawValue) },
            selfSigned: role.selfSigned,
            status: role.status == .active ? .active : .disabled,
            createdAt: role.createdAt,
            updatedAt: role.updatedAt
        )
    }
}
