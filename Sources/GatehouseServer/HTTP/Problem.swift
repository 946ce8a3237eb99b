import Foundation
import GatehouseCore
import GatehouseStore
import HTTPTypes
import Hummingbird

/// An RFC 9457 problem, Gatehouse's one HTTP error. It renders itself as `application/problem+json`
/// with a stable `code`; `type` is `urn:gatehouse:problem:<code>`. docs/errors.md lists every code.
public struct Problem: HTTPResponseError, Equatable {
    public let status: HTTPResponse.Status
    public let code: String
    public let title: String
    public let detail: String?
    public let field: String?
    public var extraHeaders: HTTPFields

    public init(_ status: HTTPResponse.Status, code: String, title: String, detail: String? = nil, field: String? = nil) {
        self.status = status
        self.code = code
        self.title = title
        self.detail = detail
        self.field = field
        self.extraHeaders = [:]
    }

    public func response(from request: Request, context: some RequestContext) throws -> Response {
        let (head, body) = rendered(requestID: context.logger[metadataKey: RequestIDMiddleware.metadataKey]?.description)
        return Response(status: head.status, headers: head.headerFields, body: .init(byteBuffer: body))
    }

    /// The answer's head and body, for the router and for `AdmissionHandler`, which answers before it.
    /// Written by `JSONWriter`, not Foundation's `JSONSerialization`: every refusal is one, a guesser's
    /// 401 and a flood's 429 too, and serialising through Foundation was 44% of an unauthenticated
    /// request's CPU (docs/PERFORMANCE.md). Members in sorted order, as before.
    func rendered(requestID: String?) -> (HTTPResponse, ByteBuffer) {
        var writer = JSONWriter(capacity: 256)
        writer.object { body in
            body.member("code", code)
            body.member("detail", detail)
            body.member("field", field)
            body.member("requestId", requestID)
            body.key("status")
            body.integer(Int(status.code))
            body.member("title", title)
            body.member("type", "urn:gatehouse:problem:\(code)")
        }
        var headers = extraHeaders
        headers[.contentType] = "application/problem+json"
        return (HTTPResponse(status: status, headerFields: headers), ByteBuffer(bytes: writer.bytes))
    }
}

extension Problem {
    static func internalError() -> Problem {
        Problem(.internalServerError, code: "internal_error", title: "Internal error", detail: "The request id identifies the logged cause.")
    }

    static func databaseUnavailable() -> Problem {
        Problem(.serviceUnavailable, code: "database_unavailable", title: "Database unavailable", detail: "Try again shortly.")
    }

    /// A handler's refusal of a query parameter or header: the domain's `invalid_parameter`, so that
    /// handlers and operations say it one way.
    static func badParameter(_ name: String, _ detail: String) -> Problem {
        Problem(DomainError(.invalidParameter, detail, field: name))
    }

    static func unauthorized(code: String, detail: String, challenge: String) -> Problem {
        var problem = Problem(.unauthorized, code: code, title: "Unauthorized", detail: detail)
        problem.extraHeaders[.wwwAuthenticate] = challenge
        return problem
    }

    /// A domain refusal: its kind gives the status, its code the `code`. Faults are the service's,
    /// answered as an internal error (the problem middleware logs the cause).
    init(_ error: DomainError) {
        guard error.kind != .fault else {
            self = .internalError()
            return
        }
        let status = HTTPResponse.Status(error.kind)
        self.init(status, code: error.code.rawValue, title: status.reasonPhrase, detail: error.detail, field: error.field)
    }

    /// Store failures that reach a handler without a more specific meaning.
    init(_ error: StoreError) {
        switch error {
        case .notFound(let what):
            self.init(.notFound, code: "not_found", title: "Not found", detail: what)
        case .conflict:
            self.init(.conflict, code: "concurrent_change", title: "Conflict", detail: "Another change came first; read and try again.")
        case .unavailable:
            self = .databaseUnavailable()
        case .corruptRow, .migrationFailed:
            self = .internalError()
        }
    }
}
