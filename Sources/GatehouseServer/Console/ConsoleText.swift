import Foundation
import GatehouseCore

/// How the console writes values for people.
enum ConsoleText {
    static func time(_ date: Date) -> String {
        date.formatted(Date.ISO8601FormatStyle())
    }

    /// An audit entry's change as `field: before → after`, one field per line, fields in name order.
    static func change(before: AuditSnapshot?, after: AuditSnapshot?) -> String {
        let names = Set((before ?? [:]).keys).union((after ?? [:]).keys).sorted()
        return names.compactMap { name in
            let old = before?[name].map(Self.value)
            let new = after?[name].map(Self.value)
            guard old != new else { return nil }
            return "\(name): \(old ?? "none") → \(new ?? "none")"
        }.joined(separator: "\n")
    }

    static func value(_ value: AuditValue) -> String {
        switch value {
        case .string(let text): text
        case .int(let number): String(number)
        case .strings(let texts): texts.joined(separator: ", ")
        case .null: "null"
        }
    }
}
