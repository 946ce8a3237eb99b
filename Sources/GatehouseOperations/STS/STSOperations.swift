import Crypto
import Foundation
import GatehouseCore
import GatehouseStore

/// Object-storage access for attested devices: temporary credentials from the role's STS (cached,
/// one upstream call per key at a time), OSS strings signed in self-signed mode, presigned URLs.
/// Each answers only within the role's session policy for the caller.
public struct STSOperations: Sendable {
    let store: any STSRoleStore
    let activity: any ActivityCounting
    let apps: AppOperations
    let roles: STSRoleOperations
    let attesters: AttesterOperations
    let attestation: AttestationGateOperations
    let box: SecretBox
    let clock: any GatehouseClock
    let sts: any STSUpstream
    let flights = CredentialFlights()
    let onUpstreamCall: @Sendable (STSProvider) -> Void

    public init(
        store: any STSRoleStore,
        activity: any ActivityCounting,
        apps: AppOperations,
        attesters: AttesterOperations,
        attestation: AttestationGateOperations,
        box: SecretBox,
        clock: any GatehouseClock,
        sts: any STSUpstream,
        onUpstreamCall: @escaping @Sendable (STSProvider) -> Void = { _ in }
    ) {
        self.store = store
        self.activity = activity
        self.apps = apps
        self.roles = STSRoleOperations(store: store, apps: apps, box: box, clock: clock, allowInternalEndpoints: sts.allowInternalEndpoints)
        self.attesters = attesters
        self.attestation = attestation
        self.box = box
        self.clock = clock
        self.sts = sts
        self.onUpstreamCall = onUpstreamCall
    }

    /// Who is asking: the app, the role, the attested device, and the account the app's backend
    /// vouched for (when the role's policy needs one).
    struct Caller {
        let app: App
        let role: StoredRole
        let deviceID: DeviceID
        let accountID: String?
        /// The session policy for this caller, rendered; nil when the role sends none.
        let policy: String?
    }

    /// The claims of the attestation token the caller sent for the role's attester, checked (a use
    /// counted) and, when the role asks, saying the device's hardware attested it.
    private func attestedClaims(app: App, role: STSRole, header: (String) -> String?) async throws -> AttestationClaims {
        let attester = try await attesters.attester(app.appKey, attestID: role.attestID)
        let bearer = header("Authorization").flatMap { $0.hasPrefix("Bearer ") ? String($0.dropFirst(7)) : nil }
        guard let token = header(attester.tokenHeader) ?? bearer, !token.isEmpty else {
            throw DomainError(
                .attestationRequired,
                "Send an attestation token of \(role.attestID) in \(attester.tokenHeader).",
                field: attester.tokenHeader
            )
        }
        let bound = attester.bindHeader.map { header($0) ?? "" }
        let claims: AttestationClaims
        switch try await attestation.introspect(app: app, token: token, attestID: role.attestID.rawValue, boundValue: bound, consume: true) {
        case .inactive(let reason):
            throw DomainError(.attestationRequired, "The attestation token is not valid (\(reason.rawValue)).", field: attester.tokenHeader)
        case .active(let active): claims = active
        }
        guard role.admitsAttestation(of: claims) else {
            throw DomainError(
                .hardwareAttestationRequired,
                "Role \(role.roleID) needs a device whose hardware attested it; this token's device attested otherwise.",
                field: attester.tokenHeader
            )
        }
        return claims
    }

    /// `header` reads the request's headers by name (the attestation token travels in the
    /// attester's header, or as `Authorization: Bearer`).
    func caller(appKey: AppKey, roleID: String, accountID: String?, header: (String) -> String?) async throws -> Caller {
        let app = try await apps.app(appKey)
        try app.requireActive()
        let stored = try await roles.storedRole(app, try RoleID(validating: roleID))
        let role = stored.role
        guard role.status == .active else { throw DomainError(.roleDisabled, "Role \(role.roleID) is disabled.", field: "roleId") }
        let claims = try await attestedClaims(app: app, role: role, header: header)
        let device = try DeviceID(validating: claims.did)
        var latest: RoleAccess.LatestDecision?
        if RoleAccess.needsLatestDecision(role, requestedAccount: accountID) {
            latest = try await store.latestDecision(appID: app.id, deviceID: device, decidedAfter: RoleAccess.windowStart(at: clock.now()))
                .map { RoleAccess.LatestDecision(decision: $0.decision, accountID: $0.accountID) }
        }
        let account = try RoleAccess.vouchedAccount(role: role, latest: latest, requestedAccount: accountID)
        let policy = try role.policyTemplate.map { template throws(DomainError) in
            try StoragePolicy.render(template, accountID: account ?? "none", deviceID: device.rawValue)
        }
        return Caller(app: app, role: stored, deviceID: device, accountID: account, policy: policy)
    }

    // MARK: Credentials

    public func credentials(appKey: AppKey, roleID: String, accountID: String?, header: (String) -> String?) async throws -> TemporaryCredentials {
        let caller = try await caller(appKey: appKey, roleID: roleID, accountID: accountID, header: header)
        let credentials = try await credentials(for: caller, neededUntil: nil)
        let role = caller.role.role
        activity.countActivity([ActivityKey(appID: role.appID, at: clock.now(), metric: .stsVended, label: role.provider.rawValue)])
        return credentials
    }

    /// Cached credentials when they outlive `neededUntil` by the refresh margin, else fresh ones.
    /// A failed refresh is reported; stale credentials are never the fallback.
    func credentials(for caller: Caller, neededUntil: Date?) async throws -> TemporaryCredentials {
        let role = caller.role.role
        let cacheKey = Hex.encode(SHA256.hash(data: Array("\(role.updatedAt.timeIntervalSince1970)\n\(caller.policy ?? "")".utf8)))
        let context = "sts-credentials:\(role.appID):\(role.roleID):\(cacheKey)"
        let cached = { @Sendable () async throws -> TemporaryCredentials? in
            guard let row = try await store.cachedCredentials(appID: role.appID, roleID: role.roleID, cacheKey: cacheKey),
                let opened = try? box.open(row.sealed, context: context),
                let credentials = try? JSONDecoder().decode(TemporaryCredentials.self, from: Data(opened)),
                credentials.usable(at: clock.now(), neededUntil: neededUntil)
            else { return nil }
            return credentials
        }
        if let credentials = try await cached() { return credentials }
        let key = try roles.openKey(caller.role)
        let parameters = AssumeRole.Parameters(
            sessionName: AssumeRole.sessionName(deviceID: caller.deviceID.rawValue),
            policy: caller.policy,
            durationSeconds: role.durationSeconds
        )
        return try await flights.run(cacheKey) { [store, box, clock, sts, onUpstreamCall] in
            if let credentials = try await cached() { return credentials }
            let now = clock.now()
            let call =
                switch role.provider {
                case .aws: AssumeRole.aws(role: role, key: key, parameters: parameters, now: now)
                case .alibaba: AssumeRole.alibaba(role: role, key: key, parameters: parameters, nonce: UUID.random().uuidString, now: now)
                }
            onUpstreamCall(role.provider)
            let credentials = try await sts.assumeRole(call, provider: role.provider).get()
            guard credentials.usable(at: clock.now(), neededUntil: neededUntil) else {
                throw UpstreamFailure.garbled("the credentials expire in under \(Int(TemporaryCredentials.refreshMargin)) s")
            }
            let sealed = box.seal(Array(try JSONEncoder().encode(credentials)), context: context)
            try await store.cacheCredentials(
                appID: role.appID,
                roleID: role.roleID,
                cacheKey: cacheKey,
                CachedCredentials(sealed: sealed, expiresAt: credentials.expiration),
                at: now
            )
            return credentials
        }
    }

    // MARK: Self-signed mode

    /// The OSS clock-skew limit for a signed request.
    static let dateSkew: TimeInterval = 900

    /// `OSS <AccessKeyId>:<signature>` for the client's V1 string-to-sign, once it reads as a request
    /// the caller's policy allows, dated now (or a URL expiring soon enough).
    public func signOSS(appKey: AppKey, roleID: String, content: String, accountID: String?, header: (String) -> String?) async throws -> String {
        let caller = try await caller(appKey: appKey, roleID: roleID, accountID: accountID, header: header)
        let role = caller.role.role
        guard role.selfSigned, let policy = caller.policy else {
            throw DomainError(.storageAccessDenied, "Role \(role.roleID) does not sign strings (selfSigned is off).", field: "roleId")
        }
        let request = try OSSStringToSign.parse(content)
        let now = clock.now()
        switch request.when {
        case .date(let date) where abs(date.timeIntervalSince(now)) > Self.dateSkew:
            throw DomainError(.invalidStringToSign, "The date is more than 15 minutes from now.", field: "content")
        case .expires(let expires) where expires <= now || expires.timeIntervalSince(now) > Double(role.longestPresignSeconds):
            throw DomainError(.invalidStringToSign, "A URL expires within \(role.longestPresignSeconds) s from now.", field: "content")
        default: break
        }
        guard let bucket = request.bucket, let action = StorageAction.oss(request) else {
            throw DomainError(.storageAccessDenied, "\(request.verb) on this resource is not signed in self-signed mode.", field: "content")
        }
        let object = request.key.isEmpty ? bucket : "\(bucket)/\(request.key)"
        guard try StoragePolicy.parse(policy).allows(service: "oss", action: action, object: object) else {
            throw DomainError(.storageAccessDenied, "The policy does not allow oss:\(action) on \(object).", field: "content")
        }
        let key = try roles.openKey(caller.role)
        return OSSV1Signature.authorization(
            accessKeyID: key.accessKeyID,
            signature: OSSV1Signature.signature(stringToSign: content, secret: key.accessKeySecret)
        )
    }

    // MARK: Presigned URLs

    public func presign(
        appKey: AppKey,
        roleID: String,
        request: PresignRequest,
        accountID: String?,
        header: (String) -> String?
    ) async throws -> (url: String, expiration: Date) {
        let caller = try await caller(appKey: appKey, roleID: roleID, accountID: accountID, header: header)
        let role = caller.role.role
        guard let endpoint = role.endpoint else {
            throw DomainError(.invalidPresignRequest, "Role \(role.roleID) has no storageEndpoint.", field: "roleId")
        }
        if request.ossV4 && role.provider != .alibaba {
            throw DomainError(
                .invalidPresignRequest,
                "signatureVersion v4 is OSS's (alibaba roles); aws roles sign with SigV4.",
                field: "signatureVersion"
            )
        }
        guard let action = StorageAction.presigned(method: request.method) else {
            throw DomainError(.invalidPresignRequest, "method is GET or PUT.", field: "method")
        }
        guard StorageBucket.isValid(request.bucket) else {
            throw DomainError(.invalidPresignRequest, "bucket is not a bucket name.", field: "bucket")
        }
        guard (1...1023).contains(request.key.utf8.count), !request.key.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw DomainError(.invalidPresignRequest, "key is 1 to 1023 bytes without control characters.", field: "key")
        }
        guard (1...role.longestPresignSeconds).contains(request.expiresIn) else {
            throw DomainError(.invalidPresignRequest, "expiresIn is 1 to \(role.longestPresignSeconds) s for this role.", field: "expiresIn")
        }
        if let contentType = request.contentType {
            guard request.method == "PUT", (1...256).contains(contentType.utf8.count),
                contentType.unicodeScalars.allSatisfy({ $0.value >= 0x20 && $0.value < 0x7F })
            else { throw DomainError(.invalidPresignRequest, "contentType is for PUT, 1 to 256 printable characters.", field: "contentType") }
        }
        if let policy = caller.policy {
            let object = "\(request.bucket)/\(request.key)"
            guard try StoragePolicy.parse(policy).allows(service: role.provider.storageService, action: action, object: object) else {
                throw DomainError(
                    .storageAccessDenied,
                    "The policy does not allow \(role.provider.storageService):\(action) on \(object).",
                    field: "key"
                )
            }
        }
        let now = clock.now()
        let expiration = now.addingTimeInterval(TimeInterval(request.expiresIn))
        let credentials = try await credentials(for: caller, neededUntil: expiration)
        let url =
            switch role.provider {
            case .alibaba where request.ossV4:
                PresignedURL.ossV4(request, endpoint: endpoint, region: role.region, credentials: credentials, now: now)
            case .alibaba: PresignedURL.oss(request, endpoint: endpoint, credentials: credentials, now: now)
            case .aws: PresignedURL.s3(request, endpoint: endpoint, region: role.region, credentials: credentials, now: now)
            }
        return (url, expiration)
    }
}
