/// Why the domain refused an input or an operation: the one error vocabulary below HTTP, for Core and
/// for the operations the server and the command line share. A stable code says what happened; its
/// kind says what sort of refusal it is, and the server turns a kind into a status once (and each
/// SDK-facing audience into its own numeric codes).
public struct DomainError: Error, Equatable, Sendable, CustomStringConvertible {
    public enum Kind: Sendable, Equatable {
        /// The input breaks a rule (400).
        case invalid
        /// A credential or token that the caller must first obtain is missing or refused (401).
        case unauthenticated
        /// The caller may not do this now (403).
        case forbidden
        case notFound
        /// The state forbids the change, or another change came first (409).
        case conflict
        /// It existed, and is spent or expired for good (410).
        case gone
        /// Try again shortly (503).
        case unavailable
        /// A fault of the service, never the caller's: logged, answered as an internal error.
        case fault
    }

    public enum Code: String, Sendable, CaseIterable {
        case invalidAppName = "invalid_app_name"
        case invalidPlatforms = "invalid_platforms"
        case invalidAppKey = "invalid_app_key"
        case invalidEventID = "invalid_event_id"
        case invalidEventName = "invalid_event_name"
        case invalidOverlap = "invalid_overlap"
        case invalidSecretKind = "invalid_secret_kind"
        case invalidTokenName = "invalid_token_name"
        case invalidPageSize = "invalid_page_size"
        case invalidDeviceData = "invalid_device_data"
        case invalidCollectType = "invalid_collect_type"
        case invalidAccountID = "invalid_account_id"
        case eventNotRegistered = "event_not_registered"
        case invalidBridgeParameters = "invalid_bridge_parameters"
        case invalidRiskRules = "invalid_risk_rules"
        case invalidPolicyRule = "invalid_policy_rule"
        case policyRuleNotFound = "policy_rule_not_found"
        case invalidLabel = "invalid_label"
        case labelLimit = "label_limit"
        case invalidReplay = "invalid_replay"
        case replayRunning = "replay_running"
        case replayNotFound = "replay_not_found"
        case policyVersionNotFound = "policy_version_not_found"
        case invalidListEntry = "invalid_list_entry"
        case invalidSettings = "invalid_settings"
        case invalidIPAddress = "invalid_ip_address"
        case invalidZToken = "invalid_ztoken"
        case invalidDeviceID = "invalid_device_id"
        case appDisabled = "app_disabled"
        case invalidAttester = "invalid_attester"
        case invalidAttestID = "invalid_attest_id"
        case attesterNotFound = "attester_not_found"
        case attesterExists = "attester_exists"
        case attesterDisabled = "attester_disabled"
        case invalidPowPayload = "invalid_pow_payload"
        case challengeExpired = "challenge_expired"
        case challengeTampered = "challenge_tampered"
        case challengeMismatch = "challenge_mismatch"
        case wrongSolution = "wrong_solution"
        case solutionReused = "solution_reused"
        case invalidBinding = "invalid_binding"
        case invalidSDKConfig = "invalid_sdk_config"
        case invalidAttestationToken = "invalid_attestation_token"
        case invalidCaptchaRequest = "invalid_captcha_request"
        case invalidCaptchaAnswer = "invalid_captcha_answer"
        case captchaNotFound = "captcha_not_found"
        case captchaExpired = "captcha_expired"
        case captchaSolved = "captcha_solved"
        case captchaExhausted = "captcha_exhausted"
        case invalidCaptchaPass = "invalid_captcha_pass"
        case masterKeyInvalid = "master_key_invalid"
        case sealedSecretUnreadable = "sealed_secret_unreadable"
        case invalidRole = "invalid_role"
        case invalidRoleID = "invalid_role_id"
        case invalidPolicyTemplate = "invalid_policy_template"
        case roleNotFound = "role_not_found"
        case roleExists = "role_exists"
        case roleDisabled = "role_disabled"
        case invalidStringToSign = "invalid_string_to_sign"
        case invalidPresignRequest = "invalid_presign_request"
        case storageAccessDenied = "storage_access_denied"
        case attestationRequired = "attestation_required"
        case riskDecisionRequired = "risk_decision_required"
        case accountNotVouched = "account_not_vouched"
        case invalidParameter = "invalid_parameter"
        case appNotFound = "app_not_found"
        case appKeySpaceBusy = "app_key_space_busy"
        case eventAlreadyRegistered = "event_already_registered"
        case eventNotFound = "event_not_found"
        case listEntryExists = "list_entry_exists"
        case listEntryNotFound = "list_entry_not_found"
        case deviceNotFound = "device_not_found"
        case decisionNotFound = "decision_not_found"
        case adminTokenNameTaken = "admin_token_name_taken"
        case invalidAdminRole = "invalid_admin_role"
        /// A viewer's admin token on a route that changes something.
        case adminTokenReadOnly = "admin_token_read_only"
        /// A console form post without this session's form token, or from another site.
        case consoleFormRefused = "console_form_refused"
        // Hardware attestation (docs/attestation.md): why a device's attestation or assertion was refused.
        case malformedAttestation = "malformed_attestation"
        case untrustedAttestationChain = "untrusted_attestation_chain"
        case attestationNonceMismatch = "attestation_nonce_mismatch"
        case attestationAppMismatch = "attestation_app_mismatch"
        case attestationKeyMismatch = "attestation_key_mismatch"
        case attestationEnvironmentMismatch = "attestation_environment_mismatch"
        case attestationCounterInvalid = "attestation_counter_invalid"
        case attestationRevoked = "attestation_revoked"
        case attestationIntegrityInsufficient = "attestation_integrity_insufficient"
        case invalidAssertionSignature = "invalid_assertion_signature"
        case attestationNonceReused = "attestation_nonce_reused"
        case attestationKeyReused = "attestation_key_reused"
        case attestedKeyUnknown = "attested_key_unknown"
        case hardwareAttestationRequired = "hardware_attestation_required"
        // Play Integrity (docs/attestation.md): a token refused, with its reason in the detail, or none sent.
        case integrityRefused = "integrity_refused"
        case integrityTokenRequired = "integrity_token_required"

        /// The kind a refusal with this code has unless its thrower says otherwise.
        public var kind: Kind {
            switch self {
            case .appNotFound, .attesterNotFound, .roleNotFound, .captchaNotFound, .eventNotFound, .listEntryNotFound, .deviceNotFound,
                .policyRuleNotFound, .replayNotFound, .policyVersionNotFound,
                .decisionNotFound:
                .notFound
            case .appDisabled, .labelLimit, .replayRunning, .attesterExists, .roleExists, .eventAlreadyRegistered, .listEntryExists,
                .adminTokenNameTaken:
                .conflict
            case .attesterDisabled, .roleDisabled, .riskDecisionRequired, .accountNotVouched, .storageAccessDenied, .hardwareAttestationRequired,
                .integrityTokenRequired,
                .adminTokenReadOnly, .consoleFormRefused:
                .forbidden
            case .attestationRequired: .unauthenticated
            case .captchaExpired, .captchaSolved, .captchaExhausted: .gone
            case .appKeySpaceBusy: .unavailable
            case .masterKeyInvalid, .sealedSecretUnreadable: .fault
            default: .invalid
            }
        }
    }

    public let code: Code
    public let kind: Kind
    /// A sentence for a human, safe to return to the caller (never contains a secret).
    public let detail: String
    /// The request field the error is about, when there is one.
    public let field: String?

    /// `kind` overrides the code's own, where the same refusal means another thing to another caller
    /// (a disabled app refuses its callers, but forbids an operator's change by its state).
    public init(_ code: Code, _ detail: String, field: String? = nil, kind: Kind? = nil) {
        self.code = code
        self.kind = kind ?? code.kind
        self.detail = detail
        self.field = field
    }

    public var description: String { "\(code.rawValue): \(detail)" }
}
