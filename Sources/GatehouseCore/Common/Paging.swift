/// How many items a list returns at most, checked once for every list endpoint.
public struct PageSize: Equatable, Sendable {
    public static let range: ClosedRange<Int> = 1...200
    public static let standard = PageSize(unchecked: 50)

    public let value: Int

    public init(validating value: Int?) throws(DomainError) {
        guard let value else {
            self = .standard
            return
        }
        guard Self.range.contains(value) else {
            throw DomainError(.invalidPageSize, "limit is from 1 to 200; \(value) is outside.", field: "limit")
        }
        self.value = value
    }

    init(unchecked value: Int) { self.value = value }
}
