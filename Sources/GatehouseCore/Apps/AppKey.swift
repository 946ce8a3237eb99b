/// The public identifier of an app: five lowercase letters or digits, the length the Haotian SDK takes.
public struct AppKey: Hashable, Sendable, CustomStringConvertible, Comparable {
    public static let length = 5
    public static let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")

    public let rawValue: String

    public init(validating text: String) throws(DomainError) {
        // By byte: every backend and gateway request reads one, and by Character it was a fifth of
        // reading the credential. A byte outside a-z and 0-9 is outside the alphabet in any encoding.
        guard text.utf8.count == Self.length,
            text.utf8.allSatisfy({ (UInt8(ascii: "a")...UInt8(ascii: "z")).contains($0) || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains($0) })
        else {
            throw DomainError(.invalidAppKey, "An appKey is exactly 5 characters from a-z and 0-9.", field: "appKey")
        }
        self.rawValue = text
    }

    /// A fresh random key; the store's unique constraint settles the rare collision.
    public static func random<R: RandomNumberGenerator>(using generator: inout R) -> AppKey {
        AppKey(unchecked: RandomText.make(length: length, alphabet: alphabet, using: &generator))
    }

    init(unchecked text: String) {
        self.rawValue = text
    }

    public var description: String { rawValue }

    public static func < (lhs: AppKey, rhs: AppKey) -> Bool { lhs.rawValue < rhs.rawValue }
}
