import HTTPTypes

extension HTTPFields {
    /// A field's value as `self[name]` reads it (a repeated field's values joined, so that a second
    /// copy of a credential makes it unreadable rather than ignored), without the joining when the
    /// field appears once: `self[name]` joins through a lazy sequence even then, and the gate reads six
    /// fields a request (a tenth of its own work, docs/PERFORMANCE.md).
    func value(_ name: HTTPField.Name) -> String? {
        var found: String?
        for field in self where field.name == name {
            guard found == nil else { return self[name] }
            found = field.value
        }
        return found
    }
}
