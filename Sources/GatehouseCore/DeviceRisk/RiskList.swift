import Foundation

/// An allow-, deny- or challenge-list entry of one app: a device, an account, an IP address or a
/// network. The challenge list is the operator's rule for secondary verification: what is on it must
/// pass the slider captcha, and its risk decisions are at least `review`.
public struct RiskListEntry: Equatable, Sendable {
    public enum Kind: String, Sendable, CaseIterable { case allow, deny, challenge }
    public enum Subject: String, Sendable, CaseIterable { case device, account, ip, cidr }

    public let id: UUID
    public let appID: AppID
    public let kind: Kind
    public let subject: Subject
    public let value: String
    public let note: String?
    public let createdAt: Date

    public init(id: UUID, appID: AppID, kind: Kind, subject: Subject, value: String, note: String?, createdAt: Date) {
        self.id = id
        self.appID = appID
        self.kind = kind
        self.subject = subject
        self.value = value
        self.note = note
        self.createdAt = createdAt
    }

    /// Checks an operator's new entry; values are normalised (an IP as parsed, a CIDR with its prefix).
    public static func draft(
        app: App,
        kind: String,
        subject: String,
        value: String,
        note: String?,
        at now: Date
    ) throws(DomainError) -> RiskListEntry {
        guard let kind = Kind(rawValue: kind) else {
            throw DomainError(.invalidListEntry, "list is 'allow', 'deny' or 'challenge'.", field: "list")
        }
        guard let subject = Subject(rawValue: subject) else {
            throw DomainError(.invalidListEntry, "type is device, account, ip or cidr.", field: "type")
        }
        let normalised: String
        switch subject {
        case .device: normalised = try DeviceID(validating: value).rawValue
        case .account: normalised = try AccountID(validating: value).rawValue
        case .ip:
            guard let address = IPAddress(value) else { throw DomainError(.invalidListEntry, "'\(value)' is not an IP address.", field: "value") }
            normalised = address.description
        case .cidr:
            guard let network = CIDR(value) else {
                throw DomainError(.invalidListEntry, "'\(value)' is not a CIDR such as 10.0.0.0/8.", field: "value")
            }
            normalised = network.description
        }
        if let note, note.unicodeScalars.count > 200 || note.hasControlCharacters {
            throw DomainError(.invalidListEntry, "note is at most 200 characters without control characters.", field: "note")
        }
        return RiskListEntry(id: UUID.random(), appID: app.id, kind: kind, subject: subject, value: normalised, note: note, createdAt: now)
    }

    public func matches(device: DeviceID?, account: AccountID?, address: IPAddress?) -> Bool {
        switch subject {
        case .device: device?.rawValue == value
        case .account: account?.rawValue == value
        case .ip: address.map { IPAddress(value) == $0 } ?? false
        case .cidr: address.flatMap { a in CIDR(value).map { $0.contains(a) } } ?? false
        }
    }
}
