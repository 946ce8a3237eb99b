import GatehouseCore
import NIOCore

/// The risk query's body (`RiskQuery` in openapi.yaml), read with the strict JSON reader rather than
/// `JSONDecoder`, whose generic machinery was 11.5% of the forged-token route's profile
/// (docs/PERFORMANCE.md). The refusals are `JSONBody.decode`'s: the media type, malformed JSON, an
/// unknown field, a missing or null one, a value of the wrong type, each with its field.
struct RiskQueryBody: Equatable {
    let ztoken: String
    let eventID: Int
    let accountID: String
    let clientIP: String
    let userAgent: String?

    private static let required = ["accountId", "clientIp", "eventId", "ztoken"]
    private static let known = Set(required + ["userAgent"])

    static func decode(_ buffer: ByteBuffer, contentType: String?) throws(Problem) -> RiskQueryBody {
        try JSONBody.requireJSON(contentType)
        guard let document = JSONValue.parse(Array(buffer.readableBytesView)) else { throw JSONBody.malformedJSON }
        guard let members = document.object else { throw invalid(nil, "Field '(body)' must be of the documented type.") }
        // The least name, not the first seen: the same field is named whatever the body's order.
        if let unknown = members.keys.filter({ !known.contains($0) }).min() {
            throw Problem(
                .badRequest,
                code: "unknown_field",
                title: "Unknown field",
                detail: "Field '\(unknown)' is not part of this request.",
                field: unknown
            )
        }
        if let null = members.compactMap({ $0.value == .null ? $0.key : nil }).min() {
            throw invalid(null, "Field '\(null)' may not be null; omit it instead.")
        }
        if let missing = required.first(where: { members[$0] == nil }) { throw invalid(missing, "Missing field '\(missing)'.") }
        func text(_ name: String) throws(Problem) -> String? {
            guard let value = members[name] else { return nil }
            guard let text = value.string else { throw invalid(name, "Field '\(name)' must be a string.") }
            return text
        }
        // JSON Schema's integer: 3301 and 3301.0 alike; a fraction or a number past 64 bits is not one.
        let eventID: Int
        switch members["eventId"] {
        case .integer(let value)?: eventID = Int(value)
        case .number(let value)? where value.rounded() == value && abs(value) < 1e15: eventID = Int(value)
        default: throw invalid("eventId", "Field 'eventId' must be an integer.")
        }
        return RiskQueryBody(
            ztoken: try text("ztoken") ?? "",
            eventID: eventID,
            accountID: try text("accountId") ?? "",
            clientIP: try text("clientIp") ?? "",
            userAgent: try text("userAgent")
        )
    }

    private static func invalid(_ field: String?, _ detail: String) -> Problem {
        Problem(.badRequest, code: "invalid_body", title: "Invalid body", detail: detail, field: field)
    }
}
