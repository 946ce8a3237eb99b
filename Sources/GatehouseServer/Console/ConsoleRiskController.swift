import Foundation
import GatehouseCore
import GatehouseOperations
import Hummingbird

/// `/console/apps/:appKey/risk...`: the app's and each event's risk rules with the rules in effect per
/// event, and the allow, deny and challenge lists, through `RiskAdminOperations` as the API.
struct ConsoleRiskController {
    typealias Context = ConsoleContext
    let pages: ConsolePages
    let risk: RiskAdminOperations

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/console/apps/:appKey/risk", for: .console, use: rules)
        routes.on(.post, "/console/apps/:appKey/risk/rules", for: .consoleChanges, use: setRules)
        routes.on(.post, "/console/apps/:appKey/risk/lists", for: .consoleChanges, use: addListEntry)
        routes.on(.post, "/console/apps/:appKey/risk/lists/:entryId/remove", for: .consoleChanges, use: removeListEntry)
    }

    static let limitNames = [
        "reviewAt", "rejectAt", "maxDeviceEventsPerMinute", "maxDeviceAccountsPerDay", "maxAccountDevicesPerDay", "maxIPDevicesPerHour",
        "maxAddressAttestationsPerHour", "maxNetworkAttestationsPerHour", "maxAccountAttestationsPerDay",
    ]

    @Sendable func rules(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        let view = try await risk.rules(appKey)
        var scopes = [Self.row(scope: "app", label: "App (every event)", own: view.appRules, effective: view.appEffective)]
        for event in view.events {
            scopes.append(
                Self.row(
                    scope: "\(event.event.eventID.rawValue)",
                    label: "\(event.event.eventID.rawValue) \(event.event.name)",
                    own: event.rules,
                    effective: event.effective
                )
            )
        }
        let entries = try await risk.listEntries(appKey).map { entry in
            RulesPage.Entry(
                id: entry.id.text,
                list: entry.kind.rawValue,
                type: entry.subject.rawValue,
                value: entry.value,
                note: entry.note ?? "",
                createdAt: ConsoleText.time(entry.createdAt)
            )
        }
        return pages.page(
            RulesPage(title: "Risk rules of \(appKey)", appKey: appKey.rawValue, scopes: scopes, entries: entries),
            caller: context.console
        )
    }

    /// One scope's row: the rules in effect, and the scope's own settings to prefill its form.
    static func row(scope: String, label: String, own: RiskRules?, effective: EffectiveRiskRules) -> RulesPage.Scope {
        let values = [
            effective.reviewAt, effective.rejectAt, effective.maxDeviceEventsPerMinute, effective.maxDeviceAccountsPerDay,
            effective.maxAccountDevicesPerDay, effective.maxIPDevicesPerHour, effective.maxAddressAttestationsPerHour,
            effective.maxNetworkAttestationsPerHour, effective.maxAccountAttestationsPerDay,
        ]
        let owned = [
            own?.reviewAt, own?.rejectAt, own?.maxDeviceEventsPerMinute, own?.maxDeviceAccountsPerDay, own?.maxAccountDevicesPerDay,
            own?.maxIPDevicesPerHour, own?.maxAddressAttestationsPerHour, own?.maxNetworkAttestationsPerHour, own?.maxAccountAttestationsPerDay,
        ]
        return RulesPage.Scope(
            scope: scope,
            label: label,
            effective: values,
            fields: zip(limitNames, owned).map { RulesPage.Field(name: $0.0, value: $0.1.map(String.init) ?? "") },
            weights: (own?.weights ?? [:]).keys.sorted().map { "\($0)=\(own!.weights![$0]!)" }.joined(separator: " "),
            effectiveWeights: effective.weights.keys.sorted().map { "\($0.rawValue)=\(effective.weights[$0]!)" }.joined(separator: " ")
        )
    }

    @Sendable func setRules(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        let form = context.form
        let scope = form["scope"] ?? "app"
        let eventID: Int? = scope == "app" ? nil : try ConsoleForm.int(form, "scope")
        let limits = try Self.limitNames.map { try ConsoleForm.int(form, $0) }
        let rules = RiskRules(
            reviewAt: limits[0],
            rejectAt: limits[1],
            maxDeviceEventsPerMinute: limits[2],
            maxDeviceAccountsPerDay: limits[3],
            maxAccountDevicesPerDay: limits[4],
            maxIPDevicesPerHour: limits[5],
            maxAddressAttestationsPerHour: limits[6],
            maxNetworkAttestationsPerHour: limits[7],
            maxAccountAttestationsPerDay: limits[8],
            weights: try Self.weights(form["weights"] ?? "")
        )
        _ = try await risk.setRules(appKey, eventID: eventID, rules: rules, origin: context.origin)
        return ConsolePages.seeOther("/console/apps/\(appKey)/risk")
    }

    /// `tag=weight` pairs separated by spaces or new lines; the tags and values are checked by
    /// `RiskRules.validated`, as the API's.
    static func weights(_ text: String) throws -> [String: Int]? {
        var weights: [String: Int] = [:]
        for pair in text.split(whereSeparator: { $0 == " " || $0 == "\n" || $0 == "\r" || $0 == "," }) {
            let parts = pair.split(separator: "=", maxSplits: 1)
            guard parts.count == 2, let weight = Int(parts[1]) else {
                throw DomainError(.invalidRiskRules, "Weights are tag=number pairs, such as device.emulator=30.", field: "weights")
            }
            weights[String(parts[0])] = weight
        }
        return weights.isEmpty ? nil : weights
    }

    @Sendable func addListEntry(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        let form = context.form
        _ = try await risk.addListEntry(
            appKey,
            list: form["list"] ?? "",
            type: form["type"] ?? "",
            value: form["value"] ?? "",
            note: ConsoleForm.optional(form, "note"),
            origin: context.origin
        )
        return ConsolePages.seeOther("/console/apps/\(appKey)/risk")
    }

    @Sendable func removeListEntry(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        try await risk.removeListEntry(appKey, entryID: context.parameters.get("entryId") ?? "", origin: context.origin)
        return ConsolePages.seeOther("/console/apps/\(appKey)/risk")
    }
}

extension ConsoleRiskController {
    struct RulesPage: ConsolePage {
        static let template = "risk"
        struct Field {
            let name: String
            let value: String
        }
        /// The app's or one event's rules: those in effect, and the scope's own to prefill its form.
        struct Scope {
            let scope: String
            let label: String
            let effective: [Int]
            let fields: [Field]
            let weights: String
            let effectiveWeights: String
        }
        struct Entry {
            let id: String
            let list: String
            let type: String
            let value: String
            let note: String
            let createdAt: String
        }
        let title: String
        let appKey: String
        let scopes: [Scope]
        let entries: [Entry]
        let lists = RiskListEntry.Kind.allCases.map(\.rawValue)
        let types = RiskListEntry.Subject.allCases.map(\.rawValue)
        let limits = ConsoleRiskController.limitNames
    }
}
