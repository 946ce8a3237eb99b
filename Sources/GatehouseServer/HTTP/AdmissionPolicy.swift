import Foundation
import GatehouseCore
import GatehouseOperations
import HTTPTypes
import Hummingbird
import HummingbirdCore
import NIOCore

/// What every connection's `AdmissionHandler` shares: the slots, the routes' audiences, and the shed
/// answers rendered once. A shed answer must cost far less than the work it refuses; rendering a
/// problem document per refusal (JSON serialisation, key sorting) was most of the event loops' time
/// under a flood, so each vocabulary's body is rendered at start around a marker that the request's
/// id replaces.
final class AdmissionPolicy: Sendable {
    let limit: InFlightLimit
    let routes: RouteTable
    /// The probe listener answers `GET /health/live` on its event loop. The serving port leaves it to
    /// the router: there it is the plain-text floor the benchmark compares every route with.
    let answersLiveness: Bool
    /// What the serving port answers on its event loop when it can.
    let answers: EventLoopAnswers?
    /// Every answer given before the router carries `Date` and `Server`, as the router's do.
    let date = HTTPDateText()
    private let sdkRefusal: RenderedRefusal
    private let problem: RenderedRefusal

    init(limit: InFlightLimit, routes: RouteTable, answersLiveness: Bool = false, answers: EventLoopAnswers? = nil) {
        self.limit = limit
        self.routes = routes
        self.answersLiveness = answersLiveness
        self.answers = answers
        let detail = "This instance is at its limit of \(limit.capacity) requests at once; retry shortly."
        let marker = RenderedRefusal.marker
        sdkRefusal = RenderedRefusal(SDKError(refusal: SDKRefusal(.serverFailure, "overloaded", detail)).rendered(requestID: marker))
        problem = RenderedRefusal(Problem(.serviceUnavailable, code: "overloaded", title: "Overloaded", detail: detail).rendered(requestID: marker))
    }

    /// The 503 in the audience's vocabulary (the SDK's -8 on SDK routes, a problem elsewhere), with
    /// `Retry-After` and the request's id, as the router's refusals carry them.
    func refusal(for audience: Audience?, request: HTTPRequest) -> (HTTPResponse, ByteBuffer) {
        let header = RequestIDMiddleware.header
        let requestID = RequestIDMiddleware.acceptable(request.headerFields.value(header)) ?? UUID.random().text
        let rendered = audience == .sdk ? sdkRefusal : problem
        var head = rendered.head
        head.headerFields[.retryAfter] = RetryAfterMiddleware.seconds
        head.headerFields[header] = requestID
        return (head, rendered.body(requestID: requestID))
    }
}

/// A refusal's head and its body split where the request id goes.
private struct RenderedRefusal: Sendable {
    static let marker = "request-id-goes-here"
    let head: HTTPResponse
    let prefix: [UInt8]
    let suffix: [UInt8]

    init(_ rendered: (HTTPResponse, ByteBuffer)) {
        head = rendered.0
        let bytes = Array(rendered.1.readableBytesView)
        let marker = Array(Self.marker.utf8)
        guard let start = bytes.indices.first(where: { bytes[$0...].starts(with: marker) }) else {
            preconditionFailure("a rendered refusal carries its request id")
        }
        prefix = Array(bytes[..<start])
        suffix = Array(bytes[(start + marker.count)...])
    }

    /// An accepted id is visible ASCII (`RequestIDMiddleware`): only a quote and a backslash need escaping in JSON.
    func body(requestID: String) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(prefix.count + suffix.count + requestID.utf8.count * 2)
        buffer.writeBytes(prefix)
        for byte in requestID.utf8 {
            if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") { buffer.writeInteger(UInt8(ascii: "\\")) }
            buffer.writeInteger(byte)
        }
        buffer.writeBytes(suffix)
        return buffer
    }
}

extension HTTPServerBuilder {
    /// HTTP/1 with admission control and the body's deadline in every connection's pipeline, and the
    /// configured idle timeout.
    static func http1(admitting admission: AdmissionPolicy, _ configuration: GatehouseConfiguration) -> HTTPServerBuilder {
        .http1(
            configuration: .init(
                additionalChannelHandlers: [
                    AdmissionHandler(admission, idleTimeout: .seconds(Int64(configuration.idleTimeoutSeconds))),
                    BodyDeadlineHandler(limit: .seconds(Int64(configuration.bodyTimeoutSeconds))),
                ],
                idleTimeout: .seconds(Int64(configuration.idleTimeoutSeconds))
            )
        )
    }
}
