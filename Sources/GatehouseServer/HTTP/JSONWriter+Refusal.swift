import GatehouseCore

extension JSONWriter {
    /// The SDK's and the slider's refusal (`code`, `reason`, `message`, `requestId`), members in sorted
    /// order as their readers have always had them. Refusals are what a flood of bad requests is
    /// answered with, so they are written here rather than through Foundation's serialiser.
    static func refusal(code: Int, reason: String, message: String, requestID: String?) -> [UInt8] {
        var writer = JSONWriter(capacity: 256)
        writer.object { body in
            body.key("code")
            body.integer(code)
            body.member("message", message)
            body.member("reason", reason)
            body.member("requestId", requestID)
        }
        return writer.bytes
    }
}
