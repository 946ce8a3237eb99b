import Foundation

/// What a flood of forged (or expired, or misdirected) ztokens may cost in storage. A refused token
/// consumed nothing, and its decision says little that the previous one from the same address did
/// not: so of the refused decisions of one app, client address, token state and minute, the first
/// `fullRowsPerKey` are stored whole (the samples an analyst opens), and the rest are counted into
/// one row for that key (how many, first and last time). Keys are bounded too: past
/// `maximumKeysPerMinute` in a minute, every further key's decisions are counted under the address
/// `otherAddresses`, so an attacker who spreads a flood over many addresses still writes a bounded
/// number of rows. Each instance samples on its own; the counts add up in the store.
public struct RefusedDecisionSampler: Sendable {
    public static let fullRowsPerKey = 5
    public static let maximumKeysPerMinute = 4_096
    /// The address of the count row that takes keys past `maximumKeysPerMinute`.
    public static let otherAddresses = "*"

    struct Key: Hashable {
        let appID: AppID
        let address: String
        let state: ZTokenState
    }

    /// The minute whose keys `stored` holds, in minutes since 1970.
    private var minute = Int64.min
    /// Full rows stored this minute, by key.
    private var stored: [Key: Int] = [:]

    public init() {}

    public enum Admission: Equatable, Sendable {
        /// Store the decision whole.
        case store(RiskDecisionRecord)
        /// Count it instead, into the row this count merges with.
        case count(RefusedDecisionCount)
    }

    public mutating func admit(_ record: RiskDecisionRecord) -> Admission {
        let recordMinute = Int64((record.decidedAt.timeIntervalSince1970 / 60).rounded(.down))
        if recordMinute > minute {
            minute = recordMinute
            stored.removeAll(keepingCapacity: true)
        }
        let address = record.clientAddress ?? Self.otherAddresses
        let key = Key(appID: record.appID, address: address, state: record.tokenState)
        // A decision stamped in a minute already left behind (a request that raced the turn of the
        // minute) is counted: its minute's samples are no longer known.
        if recordMinute == minute {
            if let count = stored[key] {
                if count < Self.fullRowsPerKey {
                    stored[key] = count + 1
                    return .store(record)
                }
                return .count(RefusedDecisionCount(record, address: address))
            }
            if stored.count < Self.maximumKeysPerMinute {
                stored[key] = 1
                return .store(record)
            }
            return .count(RefusedDecisionCount(record, address: Self.otherAddresses))
        }
        return .count(RefusedDecisionCount(record, address: address))
    }
}

/// Refused decisions counted, not stored: one row per app, minute, client address and token state.
public struct RefusedDecisionCount: Equatable, Sendable {
    public let appID: AppID
    /// The start of the minute.
    public let minute: Date
    public let clientAddress: String
    public let tokenState: ZTokenState
    public var decisions: Int
    public var firstAt: Date
    public var lastAt: Date

    public init(appID: AppID, minute: Date, clientAddress: String, tokenState: ZTokenState, decisions: Int, firstAt: Date, lastAt: Date) {
        self.appID = appID
        self.minute = minute
        self.clientAddress = clientAddress
        self.tokenState = tokenState
        self.decisions = decisions
        self.firstAt = firstAt
        self.lastAt = lastAt
    }

    init(_ record: RiskDecisionRecord, address: String) {
        let start = (record.decidedAt.timeIntervalSince1970 / 60).rounded(.down) * 60
        self.init(
            appID: record.appID,
            minute: Date(timeIntervalSince1970: start),
            clientAddress: address,
            tokenState: record.tokenState,
            decisions: 1,
            firstAt: record.decidedAt,
            lastAt: record.decidedAt
        )
    }

    /// The row's identity: counts with the same key add up into one row.
    public struct Key: Hashable, Sendable {
        let appID: AppID
        let minute: Date
        let clientAddress: String
        let tokenState: ZTokenState
    }

    public var key: Key { Key(appID: appID, minute: minute, clientAddress: clientAddress, tokenState: tokenState) }

    /// Adds `other`'s decisions to this row (of the same key).
    public mutating func add(_ other: RefusedDecisionCount) {
        decisions += other.decisions
        firstAt = min(firstAt, other.firstAt)
        lastAt = max(lastAt, other.lastAt)
    }
}
