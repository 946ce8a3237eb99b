import Foundation

/// Which STS a role calls.
public enum STSProvider: String, Sendable, CaseIterable {
    /// `AssumeRole` of AWS or any AWS-compatible STS (MinIO, Ceph RGW, moto): query API, SigV4.
    case aws
    /// Alibaba Cloud STS `AssumeRole`: RPC style, HMAC-SHA1, SignatureVersion 1.0.
    case alibaba

    /// The policy service name of its object storage.
    public var storageService: String { self == .aws ? "s3" : "oss" }
}

/// A role's name within its app: 3 to 64 of `a-z 0-9 -`.
public struct RoleID: Hashable, Sendable, CustomStringConvertible {
    public let rawValue: String

    public init(validating text: String) throws(DomainError) {
        guard text.isSlug else {
            throw DomainError(.invalidRoleID, "roleId is 3 to 64 characters of a-z, 0-9 and -, not starting with -.", field: "roleId")
        }
        rawValue = text
    }

    public var description: String { rawValue }
}

public enum RoleStatus: String, Sendable, CaseIterable {
    case active, disabled
}

/// An operator's STS role: which upstream to call with which long-term key (kept sealed beside the
/// role, never here), which role to assume for how long, the session policy per caller, and who
/// may ask (callers attested by `attestID`, optionally with a recent risk decision).
public struct STSRole: Equatable, Sendable {
    public static let durationRange: ClosedRange<Int> = 900...43_200

    public let appID: AppID
    public let roleID: RoleID
    public var provider: STSProvider
    /// The STS endpoint, such as `https://sts.amazonaws.com` or `https://sts.cn-hangzhou.aliyuncs.com`.
    public var stsEndpoint: String
    /// The SigV4 region (`us-east-1`), or the OSS region (`cn-hangzhou`) for presigned URLs.
    public var region: String
    public var roleArn: String
    public var externalID: String?
    /// What each call asks for: 900 s up to `maxDurationSeconds`.
    public var durationSeconds: Int
    /// The role's maximum session duration upstream (3600 by default, at most 43200).
    public var maxDurationSeconds: Int
    /// A session policy with `${accountId}` and `${deviceId}`; nil sends none (the role's own policy applies).
    public var policyTemplate: String?
    /// Where objects live, for presigned URLs and self-signed requests; nil disables both.
    public var storageEndpoint: String?
    public var addressing: StorageEndpoint.Addressing
    /// The attester whose tokens open this role.
    public var attestID: AttestID
    /// Whether the device needs a risk decision in the last hour that is not `reject`.
    public var requireRiskDecision: Bool
    /// Credentials only for a device whose token says its hardware attested it (not a software key).
    public var requireHardwareAttestation: Bool
    /// Where hardware is required, a Play Integrity verdict at or above this level is taken instead
    /// (the role's attester is then a `playIntegrity` one, or one that accepts its verdicts); nil:
    /// hardware only.
    public var acceptPlayIntegrity: PlayIntegrityLevel?
    /// Whether `/v1/oss/sign` may sign strings with the long-term key (Alibaba roles only).
    public var selfSigned: Bool
    public var status: RoleStatus
    public let createdAt: Date
    public var updatedAt: Date

    public init(
        appID: AppID,
        roleID: RoleID,
        provider: STSProvider,
        stsEndpoint: String,
        region: String,
        roleArn: String,
        attestID: AttestID,
        createdAt: Date
    ) {
        self.appID = appID
        self.roleID = roleID
        self.provider = provider
        self.stsEndpoint = stsEndpoint
        self.region = region
        self.roleArn = roleArn
        self.externalID = nil
        self.durationSeconds = 3600
        self.maxDurationSeconds = 3600
        self.policyTemplate = nil
        self.storageEndpoint = nil
        self.addressing = provider == .aws ? .path : .virtual
        self.attestID = attestID
        self.requireRiskDecision = false
        self.requireHardwareAttestation = false
        self.selfSigned = false
        self.status = .active
        self.createdAt = createdAt
        self.updatedAt = createdAt
    }

    /// Whether the token's device attested as the role asks: anything when it does not ask for hardware;
    /// else a hardware key (not a software one), or a Play Integrity verdict where the role accepts one.
    public func admitsAttestation(of claims: AttestationClaims) -> Bool {
        guard requireHardwareAttestation else { return true }
        if let level = claims.playIntegrityLevel { return acceptPlayIntegrity.map { level >= $0 } ?? false }
        return claims.isHardwareAttested
    }

    /// The session policy template's placeholders force a known account when present.
    public var needsAccount: Bool { policyTemplate?.contains("${accountId}") ?? false }

    public var endpoint: StorageEndpoint? { storageEndpoint.flatMap { StorageEndpoint(url: $0, addressing: addressing) } }

    /// The longest a presigned URL may live: it must expire before the credentials that sign it
    /// are renewed.
    public var longestPresignSeconds: Int { durationSeconds - Int(TemporaryCredentials.refreshMargin) }

    public func validated() throws(DomainError) -> STSRole {
        func refuse(_ field: String, _ why: String) -> DomainError { DomainError(.invalidRole, why, field: field) }
        guard StorageEndpoint(url: stsEndpoint, addressing: .path) != nil else {
            throw refuse("stsEndpoint", "stsEndpoint is an http(s) URL with no path, such as https://sts.amazonaws.com.")
        }
        guard (2...32).contains(region.utf8.count), region.utf8.allSatisfy({ URIEncoding.isUnreserved($0) }) else {
            throw refuse("region", "region is 2 to 32 of A-Z a-z 0-9 - _ . ~, such as us-east-1 or cn-hangzhou.")
        }
        guard (20...2048).contains(roleArn.utf8.count), roleArn.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F }),
            roleArn.hasPrefix(provider == .aws ? "arn:" : "acs:ram::")
        else {
            throw refuse(
                "roleArn",
                provider == .aws ? "roleArn is an ARN of 20 to 2048 characters (arn:...)." : "roleArn is acs:ram::<account>:role/<name>."
            )
        }
        if let externalID {
            let allowed = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_+=,.@:/-".utf8)
            guard (2...1224).contains(externalID.utf8.count), externalID.utf8.allSatisfy(allowed.contains) else {
                throw refuse("externalId", "externalId is 2 to 1224 of A-Z a-z 0-9 and _+=,.@:/-.")
            }
        }
        guard Self.durationRange.contains(maxDurationSeconds) else {
            throw refuse("maxDurationSeconds", "maxDurationSeconds is the role's upstream maximum, 900 to 43200.")
        }
        guard (900...maxDurationSeconds).contains(durationSeconds) else {
            throw refuse("durationSeconds", "durationSeconds is 900 to the role's maxDurationSeconds (\(maxDurationSeconds)).")
        }
        if let policyTemplate { try StoragePolicy.validateTemplate(policyTemplate) }
        if let storageEndpoint, StorageEndpoint(url: storageEndpoint, addressing: addressing) == nil {
            throw refuse("storageEndpoint", "storageEndpoint is an http(s) URL with no path, such as https://oss-cn-hangzhou.aliyuncs.com.")
        }
        if selfSigned && provider != .alibaba {
            throw refuse("selfSigned", "Self-signed mode is the OSS SDKs' (Alibaba roles only).")
        }
        if selfSigned && policyTemplate == nil {
            throw refuse("selfSigned", "Self-signed mode needs a policyTemplate: it says what may be signed.")
        }
        return self
    }
}

extension STSRole {
    /// The audit log's view: every setting, never the key pair (which is not part of a role).
    public var snapshot: AuditSnapshot {
        [
            "provider": .string(provider.rawValue), "stsEndpoint": .string(stsEndpoint), "region": .string(region),
            "roleArn": .string(roleArn), "externalId": externalID.map(AuditValue.string) ?? .null,
            "durationSeconds": .int(durationSeconds), "maxDurationSeconds": .int(maxDurationSeconds),
            "policyTemplate": policyTemplate.map(AuditValue.string) ?? .null,
            "storageEndpoint": storageEndpoint.map(AuditValue.string) ?? .null, "addressing": .string(addressing.rawValue),
            "attestId": .string(attestID.rawValue), "requireRiskDecision": .string(String(requireRiskDecision)),
            "requireHardwareAttestation": .string(String(requireHardwareAttestation)),
            "acceptPlayIntegrity": acceptPlayIntegrity.map { .string($0.rawValue) } ?? .null,
            "selfSigned": .string(String(selfSigned)), "status": .string(status.rawValue),
        ]
    }
}
