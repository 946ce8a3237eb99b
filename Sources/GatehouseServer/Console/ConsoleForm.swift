import GatehouseCore
import HTTPTypes
import Hummingbird

/// The console's form posts (`application/x-www-form-urlencoded`, as browsers send them), read within
/// the same size and time bounds as every body.
enum ConsoleForm {
    static func read(_ request: Request, context: some GatehouseContext) async throws -> [String: String] {
        guard JSONBody.mediaType(of: request.headers.value(.contentType)) == "application/x-www-form-urlencoded" else {
            throw Problem(.unsupportedMediaType, code: "unsupported_media_type", title: "Unsupported media type", detail: "Send the console's form.")
        }
        let buffer = try await JSONBody.collect(request, context: context)
        guard let text = String(validating: buffer.readableBytesView, as: UTF8.self), let fields = FormFields.parse(text) else {
            throw Problem(.badRequest, code: "malformed_body", title: "Malformed body", detail: "The form could not be read.")
        }
        return fields
    }

    /// What the browser says of where the post comes from (`ConsoleForgery.sameOrigin`).
    static func fromThisSite(_ request: Request) -> Bool {
        ConsoleForgery.sameOrigin(
            origin: request.headers.value(.origin),
            fetchSite: request.headers.value(HTTPField.Name("Sec-Fetch-Site")!),
            host: request.head.authority ?? request.headers.value(HTTPField.Name("Host")!)
        )
    }

    /// A field's text, nil when absent or blank (an empty filter or an unset optional field).
    static func optional(_ fields: [String: String], _ name: String) -> String? {
        guard let value = fields[name]?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        return value
    }

    /// A whole number field, read as the API reads an integer parameter (`Query.int`).
    static func int(_ fields: [String: String], _ name: String) throws -> Int? {
        guard let text = optional(fields, name) else { return nil }
        return try Query.int(Parameters([(Substring(name), Substring(text))]), name)
    }
}

/// The session cookie: `HttpOnly` (no script reads it), `SameSite=Strict` (no other site's link or
/// form carries it), `Secure` when the browser came over TLS, scoped to the console's paths.
enum ConsoleCookie {
    static func set(_ value: String, _ context: some GatehouseContext) -> String {
        "\(ConsoleSession.cookieName)=\(value); Path=/console; HttpOnly; SameSite=Strict\(context.base.forwardedOverTLS ? "; Secure" : "")"
    }

    static func cleared(_ context: some GatehouseContext) -> String {
        "\(ConsoleSession.cookieName)=; Path=/console; Max-Age=0; HttpOnly; SameSite=Strict\(context.base.forwardedOverTLS ? "; Secure" : "")"
    }
}
