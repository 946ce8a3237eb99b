import Foundation

/// Which device and account a role serves, decided from the device's latest risk decision: a role
/// may need one (not a reject) in the last hour, and the account a policy names is the one the app's
/// backend vouched for in it, never one the device asserts.
public enum RoleAccess {
    /// How long a risk decision vouches for a device's account and risk.
    public static let decisionWindow: TimeInterval = 3600

    /// The device's latest decision within the window, as far as access needs it.
    public struct LatestDecision: Sendable, Equatable {
        public let decision: RiskDecision
        public let accountID: String

        public init(decision: RiskDecision, accountID: String) {
            self.decision = decision
            self.accountID = accountID
        }
    }

    /// Whether the latest decision must be read at all: the role needs one, or an account (its
    /// policy names it, or the caller asked for one).
    public static func needsLatestDecision(_ role: STSRole, requestedAccount: String?) -> Bool {
        role.requireRiskDecision || role.needsAccount || requestedAccount != nil
    }

    /// The earliest decision time that still vouches at `now`.
    public static func windowStart(at now: Date) -> Date {
        now.addingTimeInterval(-decisionWindow)
    }

    /// The account the role serves the device for (nil when the role names none and none was asked
    /// for), or the refusal.
    public static func vouchedAccount(
        role: STSRole,
        latest: LatestDecision?,
        requestedAccount: String?
    ) throws(DomainError) -> String? {
        if role.requireRiskDecision {
            guard let latest else {
                throw DomainError(.riskDecisionRequired, "This role needs a risk decision about the device in the last hour.", field: "roleId")
            }
            guard latest.decision != .reject else {
                throw DomainError(.riskDecisionRequired, "The device's latest risk decision is reject.", field: "roleId")
            }
        }
        let account = latest?.accountID
        if role.needsAccount && account == nil {
            throw DomainError(
                .accountNotVouched,
                "No risk decision in the last hour names this device's account; the app's backend vouches for it with a risk query.",
                field: "accountId"
            )
        }
        if let requestedAccount, requestedAccount != account {
            throw DomainError(.accountNotVouched, "accountId is not the account the app's backend vouched for on this device.", field: "accountId")
        }
        return account
    }
}
