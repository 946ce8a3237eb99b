import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// A request body's deadline, kept by its connection: from the request's head, the body's end must
/// arrive within `GATEHOUSE_BODY_TIMEOUT_SECONDS`, or the connection's request stream fails with
/// `BodyDeadlineHandler.Expired`, which the body's reader answers 408 (`JSONBody.collect`) and which
/// ends the connection if nothing reads it. A deadline kept by the connection, where the reader had
/// raced its read against an alarm in two child tasks of a task group per request (with their
/// switches, and a deadline entry); the 400 step of `bench/run`, which reads a body and refuses it,
/// went from 0.63x-0.65x of plain text to 0.68x-0.71x (docs/PERFORMANCE.md).
///
/// Behind `AdmissionHandler`: a request shed there never reaches this handler, its body dropped.
final class BodyDeadlineHandler: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    /// The body did not end within the deadline.
    struct Expired: Error {}

    private let limit: TimeAmount
    /// When the body being read must have ended; nil while no body is awaited.
    private var bodyDeadline: NIODeadline?
    /// At most one alarm per connection, never called off per request: NIO's `Scheduled.cancel` scans
    /// every timer of the event loop (one or more per connection), so a cancel per request made each
    /// request's cost grow with the connections held open, which an attacker chooses (9% of the event
    /// loops' time in a flood of 2,000 connections). An alarm set for an earlier request rings no later
    /// than the current one's deadline and is set again for it.
    private var alarm: Scheduled<Void>?

    init(limit: TimeAmount) {
        self.limit = limit
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head(let request):
            bodyDeadline = nil
            if RetryAfterMiddleware.hasBody(request.headerFields) {
                let deadline = NIODeadline.now() + limit
                bodyDeadline = deadline
                if alarm == nil { setAlarm(at: deadline, context: context) }
            }
        case .end:
            bodyDeadline = nil
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    private func setAlarm(at deadline: NIODeadline, context: ChannelHandlerContext) {
        alarm = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in
            self?.ring(context: context)
        }
    }

    private func ring(context: ChannelHandlerContext) {
        alarm = nil
        guard let deadline = bodyDeadline else { return }
        guard deadline <= .now() else {
            setAlarm(at: deadline, context: context)
            return
        }
        bodyDeadline = nil
        context.fireErrorCaught(Expired())
    }

    /// The connection's end calls its alarm off: once per connection, and a closed channel is not kept
    /// alive by an alarm until it rings.
    func channelInactive(context: ChannelHandlerContext) {
        callOff()
        context.fireChannelInactive()
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        callOff()
    }

    private func callOff() {
        bodyDeadline = nil
        alarm?.cancel()
        alarm = nil
    }
}
