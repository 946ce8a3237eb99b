import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// A request body's deadline, kept by its connection: from the request's head, the body's end must
/// arrive within `GATEHOUSE_BODY_TIMEOUT_SECONDS`, or the connection's request stream fails with
/// `BodyDeadlineHandler.Expired`, which the body's reader answers 408 (`JSONBody.collect`) and which
/// ends the connection if nothing reads it. One timer on the event loop per request with a body, where
/// the reader had raced its read against an alarm in two child tasks of a task group per request
/// (with their switches, and a deadline entry); the 400 step of `bench/run`, which reads a body and
/// refuses it, went from 0.63x-0.65x of plain text to 0.68x-0.71x (docs/PERFORMANCE.md).
///
/// Behind `AdmissionHandler`: a request shed there never reaches this handler, its body dropped.
final class BodyDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    /// The body did not end within the deadline.
    struct Expired: Error {}

    private let limit: TimeAmount
    private var deadline: Scheduled<Void>?

    init(limit: TimeAmount) {
        self.limit = limit
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            disarm()
            if RetryAfterMiddleware.hasBody(request.headerFields) {
                let loop = context.eventLoop.assumeIsolated()
                deadline = loop.scheduleTask(in: limit) { [weak self] in
                    self?.deadline = nil
                    context.fireErrorCaught(Expired())
                }
            }
        case .end:
            disarm()
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    func channelInactive(context: ChannelHandlerContext) {
        disarm()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        disarm()
    }

    private func disarm() {
        deadline?.cancel()
        deadline = nil
    }
}
