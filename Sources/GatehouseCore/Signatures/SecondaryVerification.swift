// Signatures: request signatures (wtoken, whash) and the secondary-verification signal.
// Serves seed 000 (the WAF app-protection SDK's vmpSign, vmpHash and cptCheck).

/// What the app's backend asks for when a signature fails: refuse the request, or let a person
/// prove themselves with the slider captcha and retry.
public enum SignatureFailurePolicy: String, Sendable, CaseIterable {
    case block
    case challenge
}

/// What the app's backend should do with the request.
public enum SecondaryVerdict: Sendable, Equatable {
    case allow
    /// Answer with the secondary-verification marker; the app shows the captcha and retries with its pass.
    case challenge(because: String)
    case block(because: String)
}

/// Decides when a request must pass the captcha first (docs/sdk-protocol.md, "Secondary verification"):
///
/// | situation | verdict |
/// | --- | --- |
/// | the device is on the deny list (`deviceBlocked`) | block, pass or not |
/// | any other signature failure, policy `block` | block |
/// | any other signature failure, policy `challenge` | challenge, or allow with a captcha pass |
/// | a valid signature, the device's latest decision (10 min) is `reject` | block |
/// | a valid signature, the latest decision is `review` | challenge, or allow with a captcha pass |
/// | a valid signature, the device, account or address is on the operator's challenge list | challenge, or allow with a captcha pass |
/// | a valid signature otherwise | allow |
public enum SecondaryVerification {
    /// How long a risk decision about the device keeps counting.
    public static let decisionWindowSeconds = 600.0

    public static func decide(
        failure: SignatureFailure?,
        policy: SignatureFailurePolicy,
        latestDecision: RiskDecision?,
        challengeListed: Bool = false,
        passRedeemed: Bool
    ) -> SecondaryVerdict {
        if let failure {
            if failure == .deviceBlocked || policy == .block { return .block(because: failure.rawValue) }
            return passRedeemed ? .allow : .challenge(because: failure.rawValue)
        }
        switch latestDecision {
        case .reject: return .block(because: "risk_reject")
        case .review: return passRedeemed ? .allow : .challenge(because: "risk_review")
        case .pass, nil: return challengeListed && !passRedeemed ? .challenge(because: "operator_rule") : .allow
        }
    }

    /// The marker a challenged response carries, in a cookie and in the JSON body, that the client's
    /// `cptCheck(cookie:body:)` reads.
    public static let markerName = "gatehouse_cpt"
    public static let markerCookie = "\(markerName)=1; Max-Age=300; Path=/; SameSite=Lax"
}
