// Console: the operators' web pages at /console, signed in with an admin token.
// Serves the operators of every seed's server half, as the admin API does; no SDK calls it.

import Foundation
import GatehouseCore
import GatehouseOperations
import Hummingbird

/// `/console` and `/console/apps/...`: apps, their secrets and events, through the same operations
/// (and so the same Core rules and codes) as the admin API.
struct ConsoleAppsController {
    typealias Context = ConsoleContext
    let pages: ConsolePages
    let apps: AppOperations
    let clock: any GatehouseClock

    func register(on routes: inout RouteRegistrar) {
        routes.on(.get, "/console", for: .console, use: appList)
        routes.on(.post, "/console/apps", for: .consoleChanges, use: createApp)
        routes.on(.get, "/console/apps/:appKey", for: .console, use: app)
        routes.on(.post, "/console/apps/:appKey/disable", for: .consoleChanges, use: disableApp)
        routes.on(.post, "/console/apps/:appKey/enable", for: .consoleChanges, use: enableApp)
        routes.on(.post, "/console/apps/:appKey/secrets/:kind/rotate", for: .consoleChanges, use: rotateSecret)
        routes.on(.post, "/console/apps/:appKey/events", for: .consoleChanges, use: registerEvent)
    }

    @Sendable func appList(_ request: Request, context: Context) async throws -> Response {
        let page = try await apps.list(after: request.uri.queryParameters.get("after"), limit: 100)
        let rows = page.apps.map { app in
            AppListPage.Row(
                appKey: app.appKey.rawValue,
                name: app.name,
                platforms: app.platforms.map(\.rawValue).joined(separator: ", "),
                status: app.status.rawValue,
                createdAt: ConsoleText.time(app.createdAt)
            )
        }
        return pages.page(AppListPage(apps: rows, next: page.nextAfter?.rawValue), caller: context.console)
    }

    @Sendable func createApp(_ request: Request, context: Context) async throws -> Response {
        let form = context.form
        let platforms = Platform.allCases.map(\.rawValue).filter { form["platform_\($0)"] != nil }
        let created = try await apps.create(name: form["name"] ?? "", platforms: platforms, origin: context.origin)
        let appKey = created.app.appKey.rawValue
        let shown = SecretsPage(
            title: "App \(appKey) created",
            appKey: appKey,
            notice: nil,
            secrets: [
                .init(label: "appKey", value: appKey, id: "app-key"),
                .init(label: "secretKey (the SDK's, in the app)", value: created.secretKey, id: "secret-key"),
                .init(label: "server secret (the app's backend)", value: created.serverSecret, id: "server-secret"),
            ]
        )
        return pages.page(shown, caller: context.console, status: .created)
    }

    @Sendable func app(_ request: Request, context: Context) async throws -> Response {
        let view = try await apps.view(try Query.appKey(context))
        let now = clock.now()
        let secrets = view.secrets.map { secret in
            AppPage.Secret(
                kind: secret.kind.rawValue,
                version: secret.version,
                createdAt: ConsoleText.time(secret.createdAt),
                state: secret.retiresAt.map { $0 > now ? "retires \(ConsoleText.time($0))" : "retired" } ?? "current"
            )
        }
        let app = view.app
        let shown = AppPage(
            title: app.name,
            appKey: app.appKey.rawValue,
            name: app.name,
            status: app.status.rawValue,
            active: app.status == .active,
            platforms: app.platforms.map(\.rawValue).joined(separator: ", "),
            ztokenTTL: app.settings.ztokenTTLSeconds,
            retentionDays: app.settings.retentionDays,
            secrets: secrets,
            events: view.events.map { AppPage.Event(eventId: $0.eventID.rawValue, name: $0.name) }
        )
        return pages.page(shown, caller: context.console)
    }

    @Sendable func disableApp(_ request: Request, context: Context) async throws -> Response {
        try await setStatus(.disabled, context)
    }

    @Sendable func enableApp(_ request: Request, context: Context) async throws -> Response {
        try await setStatus(.active, context)
    }

    private func setStatus(_ status: AppStatus, _ context: Context) async throws -> Response {
        let app = try await apps.setStatus(try Query.appKey(context), to: status, origin: context.origin)
        return ConsolePages.seeOther("/console/apps/\(app.appKey.rawValue)")
    }

    @Sendable func rotateSecret(_ request: Request, context: Context) async throws -> Response {
        let kind = try SecretKind(validating: context.parameters.get("kind") ?? "")
        let appKey = try Query.appKey(context)
        let rotated = try await apps.rotate(
            appKey,
            kind: kind,
            overlapSeconds: try ConsoleForm.int(context.form, "overlapSeconds"),
            origin: context.origin
        )
        let kindName = rotated.secret.stored.kind.rawValue
        let shown = SecretsPage(
            title: "New \(kindName) secret for \(appKey)",
            appKey: appKey.rawValue,
            notice: rotated.previousRetiresAt.map { "The previous version verifies until \(ConsoleText.time($0))." },
            secrets: [
                .init(label: "\(kindName) secret, version \(rotated.secret.stored.version)", value: rotated.secret.plaintext, id: "rotated-secret")
            ]
        )
        return pages.page(shown, caller: context.console)
    }

    @Sendable func registerEvent(_ request: Request, context: Context) async throws -> Response {
        let appKey = try Query.appKey(context)
        guard let eventID = try ConsoleForm.int(context.form, "eventId") else {
            throw DomainError(.invalidEventID, "An event id is an integer from 3300 to 3400.", field: "eventId")
        }
        _ = try await apps.registerEvent(appKey, eventID: eventID, name: context.form["name"] ?? "", origin: context.origin)
        return ConsolePages.seeOther("/console/apps/\(appKey)")
    }
}

extension ConsoleAppsController {
    struct AppListPage: ConsolePage {
        static let template = "apps"
        struct Row {
            let appKey: String
            let name: String
            let platforms: String
            let status: String
            let createdAt: String
        }
        let title = "Apps"
        let apps: [Row]
        let next: String?
        let platforms = Platform.allCases.map(\.rawValue)
    }

    struct AppPage: ConsolePage {
        static let template = "app"
        struct Secret {
            let kind: String
            let version: Int
            let createdAt: String
            let state: String
        }
        struct Event {
            let eventId: Int
            let name: String
        }
        let title: String
        let appKey: String
        let name: String
        let status: String
        let active: Bool
        let platforms: String
        let ztokenTTL: Int
        let retentionDays: Int
        let secrets: [Secret]
        let events: [Event]
        let kinds = SecretKind.allCases.map(\.rawValue)
    }

    /// Secrets shown once, after they are made: nowhere else does a page show one.
    struct SecretsPage: ConsolePage {
        static let template = "secrets"
        struct Secret {
            let label: String
            let value: String
            let id: String
        }
        let title: String
        let appKey: String
        let notice: String?
        let secrets: [Secret]
    }
}
