extension String {
    /// C0 or C1 control characters: never allowed in names, identifiers or device fields.
    public var hasControlCharacters: Bool {
        unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }
}

extension String {
    /// An operator-chosen name that travels in URLs and headers (attestId, roleId): 3 to 64 of
    /// `a-z 0-9 -`, not starting with `-`.
    public var isSlug: Bool {
        (3...64).contains(utf8.count) && utf8.allSatisfy { (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x2D }
            && first != "-"
    }
}

extension String {
    /// Without leading and trailing spaces and tabs (see `Substring.trimmingSpacesAndTabs`).
    public var trimmingSpacesAndTabs: Substring { self[...].trimmingSpacesAndTabs }
}

extension Substring {
    /// Without leading and trailing spaces and tabs (HTTP's optional whitespace). Foundation's
    /// `trimmingCharacters(in:)` goes through `NSString` on Linux, a cost on every request that parsed
    /// a header or an address with it.
    public var trimmingSpacesAndTabs: Substring {
        let bytes = utf8
        var start = bytes.startIndex
        var end = bytes.endIndex
        while start < end, bytes[start] == 0x20 || bytes[start] == 0x09 { bytes.formIndex(after: &start) }
        while start < end {
            let last = bytes.index(before: end)
            guard bytes[last] == 0x20 || bytes[last] == 0x09 else { break }
            end = last
        }
        return self[start..<end]
    }
}
