import Foundation
import GatehouseCore
import GatehouseOperations
import Hummingbird

/// `/console/apps/:appKey/policy...`: the fraud team's rules with an editor that shows a refused
/// expression's error in place, each rule's mode switch, and the published versions with restore,
/// through the operations the admin API uses.
struct ConsolePolicyController {
    typealias Context = ConsoleContext
    let pages: ConsolePages
    let rules: PolicyRuleOperations
    let versions: PolicyVersionOperations

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/console/apps/:appKey/policy", for: .console, use: policy)
        routes.on(.post, "/console/apps/:appKey/policy/rules", for: .consoleChanges, use: publish)
        routes.on(.post, "/console/apps/:appKey/policy/rules/:ruleName/mode", for: .consoleChanges, use: switchMode)
        routes.on(.post, "/console/apps/:appKey/policy/rules/:ruleName/remove", for: .consoleChanges, use: remove)
        routes.on(.post, "/console/apps/:appKey/policy/versions/:version/restore", for: .consoleChanges, use: restore)
    }

    @Sendable func policy(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        return try await page(appKey, draft: PolicyPage.Draft(), error: nil, context: context, status: .ok)
    }

    /// Publishes the editor's rule; a refusal renders the editor again with what was written and the
    /// error under it (its line, and a caret at its column).
    @Sendable func publish(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        let draft = PolicyPage.Draft(context.form)
        do {
            _ = try await rules.put(
                appKey,
                name: draft.name,
                when: draft.when,
                then: try draft.effect(),
                mode: PolicyRule.Mode(rawValue: draft.mode) ?? .enforce,
                eventID: try ConsoleForm.int(context.form, "event"),
                origin: context.origin
            )
        } catch let refusal as DomainError where refusal.kind == .invalid || refusal.kind == .conflict {
            return try await page(appKey, draft: draft, error: refusal, context: context, status: refusal.kind == .conflict ? .conflict : .badRequest)
        }
        return ConsolePages.seeOther("/console/apps/\(appKey)/policy")
    }

    @Sendable func switchMode(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        let name = context.parameters.get("ruleName") ?? ""
        guard let rule = try await rules.rules(appKey).first(where: { $0.name == name }) else {
            throw DomainError(.policyRuleNotFound, "\(appKey) has no rule named \(name.prefix(64)).")
        }
        let mode: PolicyRule.Mode = rule.mode == .enforce ? .monitor : .enforce
        _ = try await rules.put(
            appKey,
            name: name,
            when: rule.when,
            then: rule.then,
            mode: mode,
            eventID: rule.eventID?.rawValue,
            origin: context.origin
        )
        return ConsolePages.seeOther("/console/apps/\(appKey)/policy")
    }

    @Sendable func remove(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        try await rules.remove(appKey, name: context.parameters.get("ruleName") ?? "", origin: context.origin)
        return ConsolePages.seeOther("/console/apps/\(appKey)/policy")
    }

    @Sendable func restore(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        guard let number = try Query.int(context.parameters, "version"), number >= 1 else {
            throw Problem.badParameter("version", "version is a version number, from 1.")
        }
        _ = try await versions.restore(appKey, number: number, origin: context.origin)
        return ConsolePages.seeOther("/console/apps/\(appKey)/policy")
    }

    func page(_ appKey: AppKey, draft: PolicyPage.Draft, error: DomainError?, context: Context, status: HTTPResponse.Status) async throws -> Response
    {
        let current = try await rules.rules(appKey)
        let published = try await versions.versions(appKey, before: nil, limit: 50)
        let newest = published.first
        let shown = PolicyPage(
            title: "Policy of \(appKey)",
            appKey: appKey.rawValue,
            rules: current.map(PolicyPage.Rule.init),
            draft: draft,
            error: error.map { PolicyPage.Refusal($0, written: draft.when) },
            versions: published.map { PolicyPage.Version($0, current: $0.number == newest?.number) },
            uncompiled: (newest?.document.uncompiled ?? []).map { PolicyPage.Uncompiled(rule: $0.rule, error: $0.error) }
        )
        return pages.page(shown, caller: context.console, status: status)
    }
}
