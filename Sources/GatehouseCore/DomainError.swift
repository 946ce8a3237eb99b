/// Why the domain refused an input or an operation. One error type for Core; the server maps each
/// code to its HTTP status and problem type once.
public struct DomainError: Error, Equatable, Sendable, CustomStringConvertible {
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
    }

    public let code: Code
    /// A sentence for a human, safe to return to the caller (never contains a secret).
    public let detail: String
    /// The request field the error is about, when there is one.
    public let field: String?

    public init(_ code: Code, _ detail: String, field: String? = nil) {
        self.code = code
        self.detail = detail
        self.field = field
    }

    public var description: String { "\(code.rawValue): \(detail)" }
}
