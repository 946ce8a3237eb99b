import Foundation
import GatehouseCore
import GatehouseOperations
import Hummingbird

/// `/console/apps/:appKey/replays...`: the replay form (a window, a version, and a rule to try), each
/// replay's progress and report (the before/after matrix as a chart, each rule's hits, precision and
/// recall, the changed decisions), and cancel, through the operations the admin API uses.
struct ConsoleReplaysController {
    typealias Context = ConsoleContext
    let pages: ConsolePages
    let replays: ReplayOperations
    let versions: PolicyVersionOperations
    let rules: PolicyRuleOperations
    let clock: any GatehouseClock

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/console/apps/:appKey/replays", for: .console, use: list)
        routes.on(.post, "/console/apps/:appKey/replays", for: .consoleChanges, use: start)
        routes.on(.get, "/console/apps/:appKey/replays/:replayId", for: .console, use: replay)
        routes.on(.post, "/console/apps/:appKey/replays/:replayId/cancel", for: .consoleChanges, use: cancel)
    }

    @Sendable func list(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        let now = clock.now()
        let shown = ReplaysPage(
            title: "Replays of \(appKey)",
            appKey: appKey.rawValue,
            replays: try await replays.replays(appKey).map(ReplaysPage.Row.init),
            versions: try await versions.versions(appKey, before: nil, limit: 50).map(\.number),
            from: ConsoleText.time(now.addingTimeInterval(-7 * 86_400)),
            to: ConsoleText.time(now)
        )
        return pages.page(shown, caller: context.console)
    }

    /// Starts a replay of the version chosen (the newest when none), with the form's rule put in place
    /// of the one of its name (or added), and runs it on this instance.
    @Sendable func start(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        let form = context.form
        guard let from = ConsoleForm.optional(form, "from").flatMap(RFC3339.parse), let to = ConsoleForm.optional(form, "to").flatMap(RFC3339.parse)
        else { throw DomainError(.invalidReplay, "from and to are RFC 3339 times, such as 2026-11-24T00:00:00Z.", field: "from") }
        let version = try ConsoleForm.int(form, "version")
        var request = ReplayOperations.Request(from: from, to: to, version: version)
        if let name = ConsoleForm.optional(form, "name") {
            let draft = PolicyPage.Draft(form)
            let tried = PolicyRule(
                name: name,
                when: draft.when,
                then: try draft.effect(),
                mode: PolicyRule.Mode(rawValue: draft.mode) ?? .enforce,
                eventID: try ConsoleForm.int(form, "event").map { value throws(DomainError) in try EventID(validating: value) }
            )
            let base: [PolicyRule]
            if let version {
                base = try await versions.version(appKey, number: version).document.policyRules
            } else {
                base = try await rules.rules(appKey)
            }
            request.policyRules = base.filter { $0.name != name } + [tried]
        }
        let run = try await replays.startInBackground(appKey, request, origin: context.origin)
        return ConsolePages.seeOther("/console/apps/\(appKey)/replays/\(run.id.text)")
    }

    @Sendable func replay(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        let run = try await replays.replay(appKey, id: context.parameters.get("replayId") ?? "")
        let changes = try await replays.changes(appKey, id: run.id.uuidString, cursor: nil, limit: 50)
        return pages.page(ReplayPage(run, appKey: appKey, changes: changes.changes), caller: context.console)
    }

    @Sendable func cancel(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        let run = try await replays.cancel(appKey, id: context.parameters.get("replayId") ?? "", origin: context.origin)
        return ConsolePages.seeOther("/console/apps/\(appKey)/replays/\(run.id.text)")
    }
}
