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
/// The deadline counts only the time the server waits on the client: while the server holds the
/// connection's reading back (its pipelined requests' queue is full, the reads it asks for come when
/// the handlers catch up), the deadline moves on by that time. A client that pipelines many requests
/// on one connection to a busy server had a later request's body time out while the bytes sat unread
/// in the socket, behind our own queue (a 408 in CI, among 240 pipelined forged queries).
///
/// Behind `AdmissionHandler`: a request shed there never reaches this handler, its body dropped.
final class BodyDeadlineHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

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
    /// A read has been asked for since the last one came: the server waits on the client.
    private var readRequested = true
    /// Since when the server has held reading back while a body is awaited.
    private var heldBackSince: NIODeadline?

    init(limit: TimeAmount) {
        self.limit = limit
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        // A read delivers what one request for it asked; the next needs another.
        readRequested = false
        switch unwrapInboundIn(data) {
        case .head(let request):
            bodyDeadline = nil
            heldBackSince = nil
            if RetryAfterMiddleware.hasBody(request.headerFields) {
                let deadline = context.eventLoop.now + limit
                bodyDeadline = deadline
                if alarm == nil { setAlarm(at: deadline, context: context) }
            }
        case .end:
            bodyDeadline = nil
            heldBackSince = nil
        case .body:
            break
        }
        context.fireChannelRead(data)
    }

    func channelReadComplete(context: ChannelHandlerContext) {
        if bodyDeadline != nil && !readRequested && heldBackSince == nil { heldBackSince = context.eventLoop.now }
        context.fireChannelReadComplete()
    }

    func read(context: ChannelHandlerContext) {
        readRequested = true
        resume(at: context.eventLoop.now)
        context.read()
    }

    /// The time reading was held back added to the deadline.
    private func resume(at now: NIODeadline) {
        guard let since = heldBackSince else { return }
        heldBackSince = nil
        bodyDeadline = bodyDeadline.map { $0 + (now - since) }
    }

    private func setAlarm(at deadline: NIODeadline, context: ChannelHandlerContext) {
        alarm = context.eventLoop.assumeIsolated().scheduleTask(deadline: deadline) { [weak self] in
            self?.ring(context: context)
        }
    }

    private func ring(context: ChannelHandlerContext) {
        alarm = nil
        let now = context.eventLoop.now
        if heldBackSince != nil {
            resume(at: now)
            heldBackSince = now
        }
        guard let deadline = bodyDeadline else { return }
        guard deadline <= now else {
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
        heldBackSince = nil
        alarm?.cancel()
        alarm = nil
    }
}
