import Foundation

/// How a listing's optional filters travel in one static statement: PostgreSQL cannot type a bare NULL
/// parameter, so each filter is a 0/1 flag beside a typed placeholder value, and an absent time bound
/// is a far-away date. `(flag = 0 OR column = value)` then reads as "any, or this one".
enum ListingFilter {
    static let anyUUID = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
    static let farPast = Date(millisecondsSince1970: 0)
    /// 9999-12-31T23:59:59Z.
    static let farFuture = Date(millisecondsSince1970: 253_402_300_799_000)

    static func flag(_ present: Bool) -> SQLValue { .int(present ? 1 : 0) }
}
