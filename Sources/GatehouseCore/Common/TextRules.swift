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
