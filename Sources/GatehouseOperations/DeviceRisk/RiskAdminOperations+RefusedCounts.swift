import Foundation
import GatehouseCore
import GatehouseStore

/// The refused decisions that were counted instead of stored (a flood of forged or expired ztokens
/// past its first few rows a minute): for the API's listing and the console's explorer.
extension RiskAdminOperations {
    public struct RefusedCountQuery: Sendable {
        public var appKey: AppKey?
        public var address: String?
        public var from: Date?
        public var to: Date?
        public var cursor: String?
        public var limit: Int?

        public init() {}

        /// The filters of `GET /v1/admin/risk/refused-counts` and the explorer's counts.
        public init(_ parameters: QueryParameters) throws(DomainError) {
            appKey = try parameters.string("appKey").map { text throws(DomainError) in try AppKey(validating: text) }
            address = parameters.string("address")
            from = try parameters.date("from")
            to = try parameters.date("to")
            cursor = parameters.string("cursor")
            limit = try parameters.int("limit")
        }
    }

    public func refusedCounts(_ query: RefusedCountQuery) async throws -> (counts: [ListedRefusedCount], next: String?) {
        let pageSize = try PageSize(validating: query.limit)
        var filter = RefusedCountFilter(from: query.from, to: query.to)
        if let appKey = query.appKey {
            filter.appID = try await apps.app(appKey).id
        }
        filter.clientAddress = try query.address.map { text throws(DomainError) in
            // `*` is the row of the addresses past a minute's bound (`RefusedDecisionSampler`).
            text == RefusedDecisionSampler.otherAddresses ? text : try Self.addressFilter(text)
        }
        let cursor = try query.cursor.map(Self.parseRefusedCursor)
        let listed = try await store.refusedCounts(matching: filter, after: cursor, limit: pageSize.value + 1)
        let page = Array(listed.prefix(pageSize.value))
        let next = listed.count > pageSize.value ? page.last.map { Self.refusedCursor($0.count) } : nil
        return (page, next)
    }

    /// `minute_app_state_address`: the address last, since an IPv6 address has colons (never `_`).
    static func refusedCursor(_ count: RefusedDecisionCount) -> String {
        "\(count.minute.millisecondsSince1970)_\(count.appID.rawValue.text)_\(count.tokenState.rawValue)_\(count.clientAddress)"
    }

    static func parseRefusedCursor(_ text: String) throws -> RefusedCountCursor {
        let parts = text.split(separator: "_", maxSplits: 3).map(String.init)
        guard parts.count == 4, let milliseconds = Int64(parts[0]), let app = UUID(uuidString: parts[1]),
            let state = ZTokenState(rawValue: parts[2]), (1...64).contains(parts[3].utf8.count)
        else {
            throw DomainError(.invalidParameter, "cursor is the nextCursor of a previous page.", field: "cursor")
        }
        return RefusedCountCursor(minute: Date(millisecondsSince1970: milliseconds), appID: AppID(app), tokenState: state, clientAddress: parts[3])
    }
}
