import Foundation
import HTTPTypes
import Hummingbird
import Mustache

/// The console's templates, rendered on the server: every value goes through Mustache's HTML
/// escaping (`{{value}}`; the templates never use the unescaped form), and no page runs a script
/// that is not its own file under `/console/assets/`.
struct ConsolePages: Sendable {
    let library: MustacheLibrary
    let stylesheet: String
    let script: String

    /// The templates, style and script shipped beside the binary (`gatehouse_GatehouseServer.resources`);
    /// a missing file stops the start, rather than serving a console without its pages.
    static func load() async throws -> ConsolePages {
        guard let folder = Bundle.module.url(forResource: "ConsoleResources", withExtension: nil) else {
            throw ConsoleResourcesMissing()
        }
        let library = try await MustacheLibrary(directory: folder.path)
        let stylesheet = try String(contentsOf: folder.appendingPathComponent("console.css"), encoding: .utf8)
        let script = try String(contentsOf: folder.appendingPathComponent("console.js"), encoding: .utf8)
        for page in [
            "layout", "sign-in", "error", "apps", "app", "secrets", "decisions", "decision", "audit", "attesters", "attester", "risk",
            "roles", "role", "signing-keys", "overview", "policy", "replays", "replay",
        ] {
            guard library.getTemplate(named: page) != nil else { throw ConsoleResourcesMissing() }
        }
        return ConsolePages(library: library, stylesheet: stylesheet, script: script)
    }

    struct ConsoleResourcesMissing: Error, CustomStringConvertible {
        var description: String { "the console's templates are missing: gatehouse_GatehouseServer.resources must be beside the binary" }
    }

    /// Only this origin's style and script; no frames, no form posted elsewhere, nothing cached.
    static let policy =
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
        + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    func page(_ model: some ConsolePage, caller: ConsoleCaller?, status: HTTPResponse.Status = .ok) -> Response {
        let html = library.render(RenderedPage(model: model, me: caller.map(SignedInOperator.init)), withTemplate: type(of: model).template) ?? ""
        return Response(
            status: status,
            headers: Self.headers(contentType: "text/html; charset=utf-8"),
            body: .init(byteBuffer: ByteBuffer(string: html))
        )
    }

    static func headers(contentType: String) -> HTTPFields {
        [
            .contentType: contentType,
            .cacheControl: "no-store",
            .contentSecurityPolicy: policy,
            HTTPField.Name("X-Content-Type-Options")!: "nosniff",
            HTTPField.Name("Referrer-Policy")!: "same-origin",
            HTTPField.Name("X-Frame-Options")!: "DENY",
        ]
    }

    /// After a change: the browser asks for the page again, so reloading it does not post twice.
    static func seeOther(_ location: String, headers extra: HTTPFields = [:]) -> Response {
        var headers = extra
        headers[.location] = location
        headers[.cacheControl] = "no-store"
        return Response(status: .seeOther, headers: headers)
    }

    /// A refusal or a failure as a page, with the status and the code the API would answer.
    func error(_ problem: Problem, caller: ConsoleCaller?) -> Response {
        page(
            ErrorPage(title: problem.title, status: Int(problem.status.code), code: problem.code, detail: problem.detail),
            caller: caller,
            status: problem.status
        )
    }

    struct ErrorPage: ConsolePage {
        static let template = "error"
        let title: String
        let status: Int
        let code: String
        let detail: String?
    }
}
