import Foundation

/// A risk event number. The device-risk SDK accepts 3300...3400 only, so nothing else is representable.
public struct EventID: Hashable, Sendable, Comparable, CustomStringConvertible {
    public static let range: ClosedRange<Int> = 3300...3400

    public let rawValue: Int

    public init(validating value: Int) throws(DomainError) {
        guard Self.range.contains(value) else {
            throw DomainError(
                .invalidEventID,
                "Event IDs are integers from 3300 to 3400; \(value) is outside that range.",
                field: "eventId"
            )
        }
        self.rawValue = value
    }

    public var description: String { String(rawValue) }

    public static func < (lhs: EventID, rhs: EventID) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// An event registered for one app, with the operator's name for it.
public struct RegisteredEvent: Equatable, Sendable {
    public let appID: AppID
    public let eventID: EventID
    public let name: String
    public let createdAt: Date

    public init(appID: AppID, eventID: EventID, name: String, createdAt: Date) {
        self.appID = appID
        self.eventID = eventID
        self.name = name
        self.createdAt = createdAt
    }
}
