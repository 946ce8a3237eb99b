import Foundation
import GatehouseCore
import HTTPTypes
import NIOCore
import NIOHTTPTypes

/// Admission control on the event loop, in the channel pipeline before any request reaches Swift
/// concurrency. Under a flood the queue that grows is the executor's: every request, shed or not,
/// used to wait in it before the router could refuse it, so refusing cost nearly what serving did and
/// every answer waited behind the flood. Here:
/// - a request on an idle connection takes one of `GATEHOUSE_MAX_IN_FLIGHT` slots or is answered 503
///   with `Retry-After` at once, from the event loop (the SDK's -8 on SDK routes, a problem elsewhere);
/// - the probes (`/health/live`, `/health/ready`, `/metrics`) are never refused; on the probe listener
///   (`ProbeListener`) `GET /health/live` is answered here, so that it waits behind nothing;
/// - the gate's "let through" and a risk query's refused token are answered here when this instance
///   has all they take in memory (`EventLoopAnswers`), without a slot: they cost less than any request
///   the slots protect. Such a request is held until its end, only within the read that brought it.
///   A fresh token's risk query is answered here too, when its batch is written, on a slot
///   (`AdmissionHandler+EventLoopAnswers.swift`).
///
/// A connection holds at most one slot: Hummingbird works on a connection's requests one at a time, so
/// requests pipelined behind the first cost no more concurrency and ride on its slot. A request
/// pipelined behind probes alone, when no slot is free, ends the connection after the probes' answers
/// (a client retries unanswered pipelined requests, RFC 9112 9.3.2): it cannot be answered out of order.
///
/// A connection kept after an answer given here stays open for the idle timeout after that answer, as
/// after any other: Hummingbird's idle handler sits behind this one and never sees those answers, so
/// it would close the connection counting from the last request it served, under a client that was
/// just answered (its next request then met a closed connection, seen in the flood test).
final class AdmissionHandler: ChannelDuplexHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart
    typealias OutboundIn = HTTPResponsePart
    typealias OutboundOut = HTTPResponsePart

    let policy: AdmissionPolicy
    /// Requests passed on to the router whose response has not ended yet.
    private var outstanding = 0
    var holdsSlot = false
    /// The rest of a request answered here (its body, its end) is dropped.
    private var dropping = false
    /// A request `EventLoopAnswers` may answer, held until its end within the read that brought it.
    var held: HeldRequest?
    /// The connection is ending after a shed answer: everything the client still sends is dropped.
    var lingering = false
    /// The idle timeout, and when this handler last answered a request on a connection it kept.
    private let idleTimeout: TimeAmount?
    var answeredHere: NIODeadline?
    private var idleClose: Scheduled<Void>?
    private var quiescing = false
    /// A request answered here later (a fresh token's risk query) whose answer is not written yet.
    var pending: PendingAnswer?
    var inactive = false

    init(_ policy: AdmissionPolicy, idleTimeout: TimeAmount? = nil) {
        self.policy = policy
        self.idleTimeout = idleTimeout
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        if lingering { return }
        let part = unwrapInboundIn(data)
        if pending != nil {
            pending?.queued.append(part)
            return
        }
        process(part, context: context)
    }

    func process(_ part: HTTPRequestPart, context: ChannelHandlerContext) {
        if held != nil {
            hold(part, context: context)
            return
        }
        // Only on a connection with nothing outstanding: an answer cannot overtake an earlier request's.
        if case .head(let request) = part, outstanding == 0, let answers = policy.answers, answers.mayAnswer(request) {
            held = HeldRequest(head: request)
            return
        }
        receive(part, context: context)
    }

    /// A request is held no longer than the read that brought it: one not whole by then goes on, so
    /// the body's deadline (`BodyDeadlineHandler`) starts from its head and the router reads the rest.
    func channelReadComplete(context: ChannelHandlerContext) {
        release(context: context)
        context.fireChannelReadComplete()
    }

    func receive(_ part: HTTPRequestPart, context: ChannelHandlerContext) {
        guard case .head(let request) = part else {
            if dropping {
                if case .end = part { dropping = false }
                return
            }
            context.fireChannelRead(wrapInboundOut(part))
            return
        }
        switch admit(request) {
        case .pass:
            outstanding += 1
            // Hummingbird's idle handler sees this request and keeps the time from here on.
            answeredHere = nil
            idleClose?.cancel()
            idleClose = nil
            context.fireChannelRead(wrapInboundOut(part))
        case .live:
            dropping = true
            answer(HealthController.liveness(), to: request, endingConnection: false, context: context)
        case .shed(let audience):
            dropping = true
            let endsConnection = RetryAfterMiddleware.hasBody(request.headerFields)
            answer(policy.refusal(for: audience, request: request), to: request, endingConnection: endsConnection, context: context)
        case .endConnection:
            dropping = true
            context.close(mode: .input, promise: nil)
        }
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        if case .end = unwrapOutboundIn(data) {
            // A response to no request passed on (the decoder's 400 for a malformed head) is not counted.
            outstanding = max(0, outstanding - 1)
            if outstanding == 0 { releaseSlot() }
        }
        context.write(data, promise: promise)
    }

    func channelInactive(context: ChannelHandlerContext) {
        inactive = true
        held = nil
        pending?.queued = []
        if let close = pending?.takeClose() { context.close(mode: close.mode, promise: close.promise) }
        releaseSlot()
        idleClose?.cancel()
        idleClose = nil
        context.fireChannelInactive()
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if event is ChannelShouldQuiesceEvent { quiescing = true }
        context.fireUserInboundEventTriggered(event)
    }

    /// Hummingbird's idle close of a connection this handler answered on more recently is put off until
    /// the idle timeout has passed since that answer. Only that close: it is the one made with no
    /// promise (a connection's own end, when the client is gone, carries one and is never put off, so
    /// no promise waits on a close that may be called off), and never during a shutdown. While an answer
    /// given here later is pending, any close waits for it (it comes within the database timeout; once
    /// the connection has ended, a close is made at once).
    func close(context: ChannelHandlerContext, mode: CloseMode, promise: EventLoopPromise<Void>?) {
        if pending != nil && !inactive {
            pending?.closeAfter(mode: mode, promise: promise)
            return
        }
        guard promise == nil, mode == .all, !quiescing, !lingering, outstanding == 0, let idleTimeout, let answered = answeredHere,
            NIODeadline.now() < answered + idleTimeout
        else {
            context.close(mode: mode, promise: promise)
            return
        }
        idleClose?.cancel()
        idleClose = context.eventLoop.assumeIsolated().scheduleTask(deadline: answered + idleTimeout) { [weak self] in
            self?.idleClose = nil
            self?.close(context: context, mode: mode, promise: nil)
        }
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        releaseSlot()
    }

    private enum Admission {
        case pass, live, endConnection
        case shed(Audience?)
    }

    private func admit(_ request: HTTPRequest) -> Admission {
        let path = Self.path(of: request)
        let audience = policy.routes.audience(of: request.method, canonicalPath: path)
        if audience == .probes {
            if policy.answersLiveness && outstanding == 0 && request.method == .get && path == "/health/live" { return .live }
            return .pass
        }
        if holdsSlot { return .pass }
        if policy.limit.enter() {
            holdsSlot = true
            return .pass
        }
        return outstanding == 0 ? .shed(audience) : .endConnection
    }

    func releaseSlot() {
        guard holdsSlot else { return }
        holdsSlot = false
        policy.limit.leave()
    }

    private static func path(of request: HTTPRequest) -> Substring {
        let target = request.path ?? ""
        return target.firstIndex(of: "?").map { target[..<$0] } ?? target[...]
    }
}
