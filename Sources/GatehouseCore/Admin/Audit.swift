import Foundation

/// Who made an admin change: an admin token over HTTP, an operator at the host's command line, or
/// the app's backend with its server secret (labelling its decisions, named by the app's key).
public struct Actor: Equatable, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable {
        case adminToken = "admin-token"
        case cli
        case appServer = "app-server"
    }

    public let kind: Kind
    public let name: String

    public init(kind: Kind, name: String) {
        self.kind = kind
        self.name = name
    }

    public var description: String { "\(kind.rawValue):\(name)" }

    /// Reads an actor as `description` writes it (`admin-token:ops`, `cli:root`); nil for any other text.
    public init?(_ text: String) {
        let parts = text.split(separator: ":", maxSplits: 1).map(String.init)
        guard parts.count == 2, let kind = Kind(rawValue: parts[0]) else { return nil }
        self.init(kind: kind, name: parts[1])
    }
}

/// What an audit entry's `action` can be when an operator asks for one: the domain's dotted names
/// (`app.create`, `risk.rules`), lowercase letters, digits, `.`, `_` and `-`, at most 64 characters.
public enum AuditAction {
    public static func isWellFormed(_ text: String) -> Bool {
        !text.isEmpty && text.count <= 64
            && text.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || ".-_".unicodeScalars.contains($0) }
    }
}

/// A value in an audit snapshot. Snapshots hold what an operator would want to compare, never a secret.
public enum AuditValue: Equatable, Sendable, Codable {
    case string(String)
    case int(Int)
    case strings([String])
    case null

    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let int = try? container.decode(Int.self) {
            self = .int(int)
        } else if let strings = try? container.decode([String].self) {
            self = .strings(strings)
        } else {
            self = .string(try container.decode(String.self))
        }
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .int(let value): try container.encode(value)
        case .strings(let value): try container.encode(value)
        case .null: try container.encodeNil()
        }
    }
}

public typealias AuditSnapshot = [String: AuditValue]

/// One append-only row of the audit log, as the domain writes it.
public struct AuditEntry: Equatable, Sendable {
    public let occurredAt: Date
    public let actor: Actor
    public let action: String
    public let targetType: String
    public let targetID: String
    public let appID: AppID?
    public let before: AuditSnapshot?
    public let after: AuditSnapshot?
    public let requestID: String?
    public let sourceAddress: String?

    public init(
        occurredAt: Date,
        actor: Actor,
        action: String,
        targetType: String,
        targetID: String,
        appID: AppID?,
        before: AuditSnapshot?,
        after: AuditSnapshot?,
        requestID: String?,
        sourceAddress: String?
    ) {
        self.occurredAt = occurredAt
        self.actor = actor
        self.action = action
        self.targetType = targetType
        self.targetID = targetID
        self.appID = appID
        self.before = before
        self.after = after
        self.requestID = requestID
        self.sourceAddress = sourceAddress
    }
}

/// An audit row read back, with its position in the log.
public struct AuditRecord: Equatable, Sendable {
    public let sequence: Int64
    public let entry: AuditEntry

    public init(sequence: Int64, entry: AuditEntry) {
        self.sequence = sequence
        self.entry = entry
    }
}

/// Where and by whom a change was asked for; copied into every audit entry of that change.
public struct ChangeOrigin: Sendable {
    public let actor: Actor
    public let requestID: String?
    public let sourceAddress: String?

    public init(actor: Actor, requestID: String?, sourceAddress: String?) {
        self.actor = actor
        self.requestID = requestID
        self.sourceAddress = sourceAddress
    }

    public func entry(
        at now: Date,
        action: String,
        targetType: String,
        targetID: String,
        appID: AppID?,
        before: AuditSnapshot?,
        after: AuditSnapshot?
    ) -> AuditEntry {
        AuditEntry(
            occurredAt: now,
            actor: actor,
            action: action,
            targetType: targetType,
            targetID: targetID,
            appID: appID,
            before: before,
            after: after,
            requestID: requestID,
            sourceAddress: sourceAddress
        )
    }
}

extension App {
    public var auditSnapshot: AuditSnapshot {
        [
            "appKey": .string(appKey.rawValue),
            "name": .string(name),
            "platforms": .strings(platforms.map(\.rawValue)),
            "status": .string(status.rawValue),
            "ztokenTtlSeconds": .int(settings.ztokenTTLSeconds),
            "retentionDays": .int(settings.retentionDays),
        ]
    }
}

extension RegisteredEvent {
    public var auditSnapshot: AuditSnapshot {
        ["eventId": .int(eventID.rawValue), "name": .string(name)]
    }
}

extension SealedSecret {
    /// The version and lifetime only: the sealed bytes stay out of the log.
    public var auditSnapshot: AuditSnapshot {
        [
            "kind": .string(kind.rawValue),
            "version": .int(version),
            "retiresAt": retiresAt.map { .string(ISO8601DateFormatter().string(from: $0)) } ?? .null,
        ]
    }
}
