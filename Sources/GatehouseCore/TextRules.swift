extension String {
    /// C0 or C1 control characters: never allowed in names, identifiers or device fields.
    public var hasControlCharacters: Bool {
        unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) }
    }
}
