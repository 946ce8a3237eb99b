import GatehouseCore
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// The answers `AdmissionHandler` gives on the event loop (`EventLoopAnswers`): a request held until its
/// end within the read that brought it, answered now from memory, or later, when a fresh token's risk
/// query is written. While such an answer is pending, the connection's later requests wait in it
/// (they cannot be answered before it, RFC 9112 9.3.2), nothing more is read, and a close asked for
/// meanwhile (the idle timeout's, a shutdown's) is made once it is written; the answer holds a slot
/// among the requests in flight, as the router's work does, or the query goes to the router, which
/// sheds it.
extension AdmissionHandler {
    /// A request held for `EventLoopAnswers` takes its body and, at its end, its answer; a request
    /// those decline, or whose body outgrows the limit, is passed on as it came.
    func hold(_ part: HTTPRequestPart, context: ChannelHandlerContext) {
        guard var request = held, let answers = policy.answers else {
            // Not reached (a request is held only with answers to give); were it, nothing is dropped.
            release(context: context)
            receive(part, context: context)
            return
        }
        switch part {
        case .head:
            release(context: context)
            receive(part, context: context)
        case .body(var buffer):
            guard (request.body?.readableBytes ?? 0) + buffer.readableBytes <= answers.maxBodyBytes else {
                release(context: context)
                receive(part, context: context)
                return
            }
            if request.body == nil {
                request.body = buffer
            } else {
                request.body?.writeBuffer(&buffer)
            }
            held = request
        case .end:
            guard
                let given = answers.answer(
                    request.head,
                    body: request.body,
                    peer: { context.channel.remoteAddress },
                    on: context.eventLoop,
                    mayStart: takeSlot
                )
            else {
                release(context: context)
                receive(part, context: context)
                return
            }
            held = nil
            switch given {
            case .now(let response):
                answer(response, to: request.head, endingConnection: false, context: context)
            case .later(let response):
                pending = PendingAnswer()
                response.assumeIsolated().whenComplete { result in
                    self.answerPending(result, to: request.head, context: context)
                }
            }
        }
    }

    /// A slot for a request answered here later, held until its answer is written.
    private func takeSlot() -> Bool {
        guard !holdsSlot else { return true }
        holdsSlot = policy.limit.enter()
        return holdsSlot
    }

    /// The pending answer written (a 503 ends the connection, as the router's does for a request with a
    /// body, `RetryAfterMiddleware`), then what the client sent meanwhile taken as if it came now.
    private func answerPending(_ result: Result<(HTTPResponse, ByteBuffer?), any Error>, to request: HTTPRequest, context: ChannelHandlerContext) {
        guard let waited = pending else { return }
        pending = nil
        releaseSlot()
        guard !inactive else { return }
        var response = (try? result.get()) ?? Problem.internalError().rendered(requestID: nil)
        var endsConnection = false
        if response.0.status == .serviceUnavailable {
            if response.0.headerFields[.retryAfter] == nil { response.0.headerFields[.retryAfter] = RetryAfterMiddleware.seconds }
            endsConnection = RetryAfterMiddleware.hasBody(request.headerFields)
        }
        answer(response, to: request, endingConnection: endsConnection, context: context)
        if let close = waited.close {
            // The idle timeout's close counts from this answer, as after any other (`close`).
            self.close(context: context, mode: close.mode, promise: close.promise)
            return
        }
        for part in waited.queued where !lingering {
            if pending != nil { pending?.queued.append(part) } else { process(part, context: context) }
        }
        // A request among them answered later in turn: the read held back waits for its answer.
        guard pending == nil else {
            if waited.readWaits { pending?.readWaits = true }
            return
        }
        release(context: context)
        context.fireChannelReadComplete()
        if waited.readWaits { context.read() }
    }

    /// Nothing more is read while an answer is pending: the requests it brought could not be answered
    /// before it, only kept.
    func read(context: ChannelHandlerContext) {
        if pending != nil {
            pending?.readWaits = true
            return
        }
        context.read()
    }

    /// Passes the held request's head and body on, through admission, as if it had never been held.
    func release(context: ChannelHandlerContext) {
        guard let request = held else { return }
        held = nil
        receive(.head(request.head), context: context)
        if let body = request.body { receive(.body(body), context: context) }
    }

    /// A response without a body (the gate's 204) carries no length either (RFC 9110 8.6).
    func answer(
        _ response: (HTTPResponse, ByteBuffer?),
        to request: HTTPRequest,
        endingConnection: Bool,
        context: ChannelHandlerContext
    ) {
        var head = response.0
        head.headerFields[.date] = policy.date.now()
        head.headerFields[.server] = HTTPDateText.serverName
        if !endingConnection { answeredHere = .now() }
        if let body = response.1 { head.headerFields[.contentLength] = String(body.readableBytes) }
        if endingConnection { head.headerFields[.connection] = "close" }
        context.write(wrapOutboundOut(.head(head)), promise: nil)
        // The answer to HEAD says how long the body would be, and sends none.
        if request.method != .head, let body = response.1 { context.write(wrapOutboundOut(.body(body)), promise: nil) }
        guard endingConnection else {
            context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            return
        }
        // A shed request's body was never read: waiting for the rest of it is what a slow client wants.
        // Closing with its bytes unread would send a reset, which can destroy the answer before the
        // client reads it; so the output is closed first (the client reads the answer, then the end),
        // what it still sends is dropped, and the connection closes a moment later.
        lingering = true
        let written = context.eventLoop.makePromise(of: Void.self)
        let channel = context.channel
        written.futureResult.whenComplete { _ in
            channel.close(mode: .output).whenFailure { _ in channel.close(promise: nil) }
            channel.eventLoop.scheduleTask(in: .seconds(2)) { channel.close(promise: nil) }
        }
        context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: written)
    }

    struct HeldRequest {
        let head: HTTPRequest
        var body: ByteBuffer?
    }

    /// What a connection keeps while an answer given here later is pending.
    struct PendingAnswer {
        var queued: [HTTPRequestPart] = []
        var readWaits = false
        private(set) var close: (mode: CloseMode, promise: EventLoopPromise<Void>?)?

        /// Closes asked for meanwhile, made as one: the wider mode, every promise kept.
        mutating func closeAfter(mode: CloseMode, promise: EventLoopPromise<Void>?) {
            guard let waiting = close else {
                close = (mode, promise)
                return
            }
            let wider: CloseMode = waiting.mode == mode ? mode : .all
            if let promise, let first = waiting.promise {
                first.futureResult.cascade(to: promise)
                close = (wider, first)
            } else {
                close = (wider, waiting.promise ?? promise)
            }
        }

        mutating func takeClose() -> (mode: CloseMode, promise: EventLoopPromise<Void>?)? {
            defer { close = nil }
            return close
        }
    }
}
