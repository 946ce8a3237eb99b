import Foundation
import GatehouseAPI
import GatehouseCore
import OpenAPIRuntime

/// Domain values into the generated API types. Storage models never leave the server any other way.
extension Components.Schemas.App {
    init(_ app: App) {
        self.init(
            appKey: app.appKey.rawValue,
            name: app.name,
            platforms: app.platforms.compactMap { Components.Schemas.Platform(rawValue: $0.rawValue) },
            status: app.status == .active ? .active : .disabled,
            settings: .init(ztokenTtlSeconds: app.settings.ztokenTTLSeconds, retentionDays: app.settings.retentionDays),
            createdAt: app.createdAt,
            updatedAt: app.updatedAt
        )
    }
}

extension Components.Schemas.Event {
    init(_ event: RegisteredEvent) {
        self.init(eventId: event.eventID.rawValue, name: event.name, createdAt: event.createdAt)
    }
}

extension Components.Schemas.SecretKind {
    init(_ kind: SecretKind) {
        self = kind == .sdk ? .sdk : .server
    }
}

extension Components.Schemas.SecretVersion {
    init(_ secret: SealedSecret, now: Date) {
        self.init(
            kind: .init(secret.kind),
            version: secret.version,
            createdAt: secret.createdAt,
            retiresAt: secret.retiresAt,
            live: secret.isLive(at: now)
        )
    }
}

extension Components.Schemas.AuditEntry {
    init(_ record: AuditRecord) throws {
        let entry = record.entry
        self.init(
            sequence: record.sequence,
            occurredAt: entry.occurredAt,
            actor: entry.actor.description,
            action: entry.action,
            targetType: entry.targetType,
            targetId: entry.targetID,
            before: try entry.before.map(Self.container),
            after: try entry.after.map(Self.container),
            requestId: entry.requestID,
            sourceAddress: entry.sourceAddress
        )
    }

    private static func container(_ snapshot: AuditSnapshot) throws -> OpenAPIObjectContainer {
        var values: [String: (any Sendable)?] = [:]
        for (key, value) in snapshot {
            switch value {
            case .string(let text): values[key] = text
            case .int(let int): values[key] = int
            case .strings(let texts): values[key] = texts
            case .null: values[key] = nil as String?
            }
        }
        return try OpenAPIObjectContainer(unvalidatedValue: values)
    }
}
