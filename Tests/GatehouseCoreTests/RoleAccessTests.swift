import Foundation
import GatehouseCore
import Testing

/// Which device and account an STS role serves, from the device's latest risk decision.
struct RoleAccessTests {
    static func role(requireRiskDecision: Bool = false, policy: String? = nil) throws -> STSRole {
        var role = STSRole(
            appID: AppID(UUID()),
            roleID: try RoleID(validating: "uploads"),
            provider: .aws,
            stsEndpoint: "https://sts.amazonaws.com",
            region: "us-east-1",
            roleArn: "arn:aws:iam::123456789012:role/uploads",
            attestID: try AttestID(validating: "login-pow"),
            createdAt: Date(timeIntervalSince1970: 0)
        )
        role.requireRiskDecision = requireRiskDecision
        role.policyTemplate = policy
        return role
    }

    static let passed = RoleAccess.LatestDecision(decision: .pass, accountID: "alice")
    static let rejected = RoleAccess.LatestDecision(decision: .reject, accountID: "alice")

    @Test func aRoleWithoutConditionsReadsNoDecisionAndServesNoAccount() throws {
        let role = try Self.role()
        #expect(!RoleAccess.needsLatestDecision(role, requestedAccount: nil))
        #expect(try RoleAccess.vouchedAccount(role: role, latest: nil, requestedAccount: nil) == nil)
    }

    @Test func aRoleThatNeedsADecisionRefusesNoneAndAReject() throws {
        let role = try Self.role(requireRiskDecision: true)
        #expect(RoleAccess.needsLatestDecision(role, requestedAccount: nil))
        #expect(throws: DomainError.self) { try RoleAccess.vouchedAccount(role: role, latest: nil, requestedAccount: nil) }
        let refusal = #expect(throws: DomainError.self) { try RoleAccess.vouchedAccount(role: role, latest: Self.rejected, requestedAccount: nil) }
        #expect(refusal?.code == .riskDecisionRequired)
        #expect(try RoleAccess.vouchedAccount(role: role, latest: Self.passed, requestedAccount: nil) == "alice")
    }

    @Test func aPolicyNamingTheAccountNeedsOneVouchedFor() throws {
        let role = try Self.role(policy: "{\"Resource\":\"arn:aws:s3:::bucket/${accountId}/*\"}")
        #expect(RoleAccess.needsLatestDecision(role, requestedAccount: nil))
        let refusal = #expect(throws: DomainError.self) { try RoleAccess.vouchedAccount(role: role, latest: nil, requestedAccount: nil) }
        #expect(refusal?.code == .accountNotVouched)
        #expect(try RoleAccess.vouchedAccount(role: role, latest: Self.passed, requestedAccount: nil) == "alice")
    }

    @Test func anAccountTheDeviceAssertsMustBeTheVouchedOne() throws {
        let role = try Self.role()
        #expect(RoleAccess.needsLatestDecision(role, requestedAccount: "mallory"))
        #expect(throws: DomainError.self) { try RoleAccess.vouchedAccount(role: role, latest: Self.passed, requestedAccount: "mallory") }
        #expect(throws: DomainError.self) { try RoleAccess.vouchedAccount(role: role, latest: nil, requestedAccount: "alice") }
        #expect(try RoleAccess.vouchedAccount(role: role, latest: Self.passed, requestedAccount: "alice") == "alice")
    }

    @Test func theWindowIsTheHourBeforeNow() {
        let now = Date(timeIntervalSince1970: 100_000)
        #expect(RoleAccess.windowStart(at: now) == Date(timeIntervalSince1970: 96_400))
    }
}
