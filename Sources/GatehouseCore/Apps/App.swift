// Apps: apps with their appKey, the SDK's secretKey and the backend's server secret, and their events.
// Serves every seed: the appKey and secretKey of 000 and 002, the app backend's credential for all of them.

import Foundation

/// The internal, never-reused identity of an app; the appKey is what callers see.
public struct AppID: Hashable, Sendable, CustomStringConvertible, Comparable {
    public let rawValue: UUID

    public init(_ rawValue: UUID) { self.rawValue = rawValue }

    public static func random() -> AppID { AppID(UUID.random()) }

    public var description: String { rawValue.text }

    /// The order rows are locked in when a batch writes several apps' rows.
    public static func < (left: AppID, right: AppID) -> Bool { left.description < right.description }
}

/// The mobile platforms an app ships on.
public enum Platform: String, Sendable, CaseIterable, Comparable {
    case ios, android, harmony, web

    public static func < (lhs: Platform, rhs: Platform) -> Bool { lhs.rawValue < rhs.rawValue }
}

public enum AppStatus: String, Sendable {
    case active, disabled
}

/// An app as the operator manages it. Its secrets live apart, sealed, in `SealedSecret`s.
public struct App: Equatable, Sendable {
    public let id: AppID
    public let appKey: AppKey
    public var name: String
    public var platforms: [Platform]
    public var status: AppStatus
    public var settings: AppSettings
    public let createdAt: Date
    public var updatedAt: Date

    public init(
        id: AppID,
        appKey: AppKey,
        name: String,
        platforms: [Platform],
        status: AppStatus,
        settings: AppSettings = .standard,
        createdAt: Date,
        updatedAt: Date
    ) {
        self.id = id
        self.appKey = appKey
        self.name = name
        self.platforms = platforms
        self.status = status
        self.settings = settings
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// A disabled app's devices, pages and backend are refused.
    public func requireActive() throws(DomainError) {
        guard status == .active else {
            throw DomainError(.appDisabled, "App \(appKey) is disabled; enable it first.", field: "appKey", kind: .forbidden)
        }
    }

    /// Changing an app's secrets, events, attesters or roles is refused while it is disabled: a
    /// disabled app is frozen, a state that forbids the change.
    public func requireChangeable() throws(DomainError) {
        guard status == .active else {
            throw DomainError(.appDisabled, "App \(appKey) is disabled; enable it first.", field: "appKey", kind: .conflict)
        }
    }
}

/// What an operator may ask for when creating an app, checked before anything is stored.
public struct AppDraft: Equatable, Sendable {
    public static let nameLength = 1...100

    public let name: String
    public let platforms: [Platform]

    public init(name: String, platforms: [String]) throws(DomainError) {
        self.name = try Self.checkedName(name)
        guard !platforms.isEmpty else {
            throw DomainError(.invalidPlatforms, "Name at least one platform (ios, android, harmony, web).", field: "platforms")
        }
        var parsed: Set<Platform> = []
        for text in platforms {
            guard let platform = Platform(rawValue: text) else {
                throw DomainError(.invalidPlatforms, "Unknown platform '\(text)'; use ios, android, harmony or web.", field: "platforms")
            }
            guard parsed.insert(platform).inserted else {
                throw DomainError(.invalidPlatforms, "Platform '\(text)' is listed twice.", field: "platforms")
            }
        }
        self.platforms = parsed.sorted()
    }

    /// Names are for people: 1 to 100 characters (Unicode scalars, as JSON Schema and both databases
    /// count them), no control characters, no leading or trailing whitespace. Nothing is silently
    /// trimmed, so what is stored is what was sent.
    public static func checkedName(
        _ name: String,
        code: DomainError.Code = .invalidAppName,
        field: String = "name"
    ) throws(DomainError)
        -> String
    {
        guard nameLength.contains(name.unicodeScalars.count) else {
            throw DomainError(code, "A name is 1 to 100 characters.", field: field)
        }
        guard !name.hasControlCharacters else {
            throw DomainError(code, "A name may not contain control characters.", field: field)
        }
        guard let first = name.unicodeScalars.first, let last = name.unicodeScalars.last,
            !first.properties.isWhitespace, !last.properties.isWhitespace
        else {
            throw DomainError(code, "A name may not start or end with whitespace.", field: field)
        }
        return name
    }

    public func makeApp<R: RandomNumberGenerator>(at now: Date, using generator: inout R) -> App {
        App(
            id: .random(),
            appKey: .random(using: &generator),
            name: name,
            platforms: platforms,
            status: .active,
            createdAt: now,
            updatedAt: now
        )
    }
}

extension RegisteredEvent {
    /// Checks an operator's request to register `eventID` under `name` for `app`.
    public static func draft(app: App, eventID: Int, name: String, at now: Date) throws(DomainError) -> RegisteredEvent {
        try app.requireChangeable()
        let event = try EventID(validating: eventID)
        let checkedName = try AppDraft.checkedName(name, code: .invalidEventName, field: "name")
        return RegisteredEvent(appID: app.id, eventID: event, name: checkedName, createdAt: now)
    }
}
