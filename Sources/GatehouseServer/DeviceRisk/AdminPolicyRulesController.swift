// DeviceRisk: device start, a ztoken per event, and the app backend's risk query that consumes it.
// Serves seed 002 (the device-risk SDK: appKey + secretKey, events 3300-3400, the H5 bridge).

import Foundation
import GatehouseAPI
import GatehouseCore
import GatehouseOperations
import Hummingbird

/// `/v1/admin/apps/:appKey/risk/policy-rules...`: the fraud team's rules, through `PolicyRuleOperations`.
struct AdminPolicyRulesController {
    typealias Context = OperatorContext
    let rules: PolicyRuleOperations

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/v1/admin/apps/:appKey/risk/policy-rules", for: .operatorReads, use: list)
        routes.on(.put, "/v1/admin/apps/:appKey/risk/policy-rules/:ruleName", for: .operators, use: put)
        routes.on(.delete, "/v1/admin/apps/:appKey/risk/policy-rules/:ruleName", for: .operators, use: remove)
    }

    @Sendable func list(_ request: Request, context: Context) async throws -> Response {
        let rules = try await rules.rules(try Query.appKey(context))
        return try JSONBody.response(Components.Schemas.PolicyRules(items: rules.map(Components.Schemas.PolicyRule.init)))
    }

    @Sendable func put(_ request: Request, context: Context) async throws -> Response {
        let body = try await JSONBody.decode(Components.Schemas.PolicyRuleWrite.self, from: request, context: context)
        let rule = try await rules.put(
            try Query.appKey(context),
            name: context.parameters.get("ruleName") ?? "",
            when: body.when,
            then: try PolicyRule.Effect(body.then),
            mode: PolicyRule.Mode(rawValue: body.mode?.rawValue ?? "enforce") ?? .enforce,
            eventID: body.eventId,
            origin: context.origin
        )
        return try JSONBody.response(Components.Schemas.PolicyRule(rule))
    }

    @Sendable func remove(_ request: Request, context: Context) async throws -> Response {
        try await rules.remove(try Query.appKey(context), name: context.parameters.get("ruleName") ?? "", origin: context.origin)
        return Response(status: .noContent)
    }
}

extension PolicyRule.Effect {
    /// Exactly one of a tag with its weight, or a decision.
    init(_ effect: Components.Schemas.PolicyRuleEffect) throws(DomainError) {
        switch (effect.tag, effect.weight, effect.decide) {
        case (let tag?, let weight?, nil): self = .tag(tag, weight: weight)
        case (nil, nil, let decision?): self = .decide(RiskDecision(rawValue: decision.rawValue) ?? .review)
        default:
            throw DomainError(.invalidPolicyRule, "A rule's effect is a tag with a weight, or a decision, not both.", field: "then")
        }
    }
}

extension Components.Schemas.PolicyRule {
    init(_ rule: PolicyRule) {
        let then: Components.Schemas.PolicyRuleEffect =
            switch rule.then {
            case .tag(let tag, let weight): .init(tag: tag, weight: weight)
            case .decide(let decision): .init(decide: .init(rawValue: decision.rawValue))
            }
        self.init(
            name: rule.name,
            when: rule.when,
            then: then,
            mode: .init(rawValue: rule.mode.rawValue) ?? .enforce,
            eventId: rule.eventID?.rawValue
        )
    }
}
