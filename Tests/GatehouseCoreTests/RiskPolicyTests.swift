import Foundation
import GatehouseCore
import Testing

/// What an app's stored policy means for one risk query, worked out once in Core.
struct RiskPolicyTests {
    static func attester(_ id: String, hardware: Bool, active: Bool = true) throws -> Attester {
        var attester = Attester(
            appID: AppID(UUID()),
            attestID: try AttestID(validating: id),
            bindHeader: nil,
            createdAt: Date(timeIntervalSince1970: 0),
            updatedAt: Date(timeIntervalSince1970: 0)
        )
        attester.requireHardwareAttestation = hardware
        attester.status = active ? .active : .disabled
        return attester
    }

    @Test func onlyAnActiveAttesterThatNeedsHardwareMakesHardwareRequired() throws {
        func required(_ attesters: [Attester]) -> Bool {
            RiskPolicy(rules: [:], listEntries: [], events: [], attesters: attesters).hardwareRequired
        }
        #expect(!required([]))
        #expect(!required([try Self.attester("login", hardware: false)]))
        #expect(!required([try Self.attester("ios", hardware: true, active: false)]))
        #expect(required([try Self.attester("login", hardware: false), try Self.attester("ios", hardware: true)]))
    }

    @Test func anEventsOwnRulesOverrideTheAppsForThatEventOnly() throws {
        var app = RiskRules()
        app.reviewAt = 40
        var event = RiskRules()
        event.reviewAt = 20
        let policy = RiskPolicy(rules: [0: app, 3301: event], listEntries: [], events: [3301, 3302], attesters: [])
        #expect(policy.effectiveRules(for: try EventID(validating: 3301)).reviewAt == 20)
        #expect(policy.effectiveRules(for: try EventID(validating: 3302)).reviewAt == 40)
        #expect(RiskPolicy.none.effectiveRules(for: try EventID(validating: 3302)) == RiskRules.effective(app: nil, event: nil))
    }
}
