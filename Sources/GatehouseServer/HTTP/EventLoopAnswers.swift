import Foundation
import GatehouseCore
import HTTPTypes
import Logging
import NIOCore
import Prometheus

/// What the serving port answers on its event loop, before Swift concurrency and the router, when this
/// instance holds what the answer takes: the gate letting a request through (`EventLoopGate`), and a
/// risk query (`EventLoopRiskQueries`): at once when its token or body is refused before any read, when
/// its group commit is written when the token may be fresh. `AdmissionHandler` holds such a request
/// until its end within the read that brought it; a request declined here, or not whole within that
/// read, goes on to the router as if it had never been held. These are the requests a gateway sends
/// before every protected call, an app's backend for each of its users' actions, and an attacker's
/// forged flood at full rate, and for them the hop to a task, the router and the middleware cost more
/// than the decision (docs/PERFORMANCE.md, issue 34). Each answer carries what the router's would: the
/// request id, `gatehouse_http_requests_total` and its latency, the access log's line; and
/// `gatehouse_answers_in_memory_total{route}` counts them. A class: the connection's handler took a
/// copy of the struct it was, with every reference in it retained and released, twice a request.
final class EventLoopAnswers: Sendable {
    static let answeredInMemory = "gatehouse_answers_in_memory_total"

    let gate: EventLoopGate
    let riskQueries: EventLoopRiskQueries
    /// A held body longer than this goes to the router, which refuses it (413).
    let maxBodyBytes: Int
    let metrics: MetricsMiddleware
    private let answered: [String: Counter]
    let trustedProxies: [CIDR]
    let logger: Logger

    init(
        gate: EventLoopGate,
        riskQueries: EventLoopRiskQueries,
        maxBodyBytes: Int,
        metrics: MetricsMiddleware,
        registry: PrometheusCollectorRegistry,
        trustedProxies: [CIDR],
        logger: Logger
    ) {
        self.gate = gate
        self.riskQueries = riskQueries
        self.maxBodyBytes = maxBodyBytes
        self.metrics = metrics
        answered = Dictionary(
            uniqueKeysWithValues: [EventLoopGate.path, EventLoopRiskQueries.path].map { route in
                (route, registry.makeCounter(name: Self.answeredInMemory, labels: [("route", route)]))
            }
        )
        self.trustedProxies = trustedProxies
        self.logger = logger
    }

    /// Whether `request` is one these might answer (its method and exact target), to be held until its
    /// end. A request that asks for its connection to close after it goes to the router, whose
    /// connection handler closes it (the answers here keep the connection).
    func mayAnswer(_ request: HTTPRequest) -> Bool {
        guard let target = request.path, !(request.headerFields[.connection]?.lowercased().contains("close") ?? false) else { return false }
        return request.method == .get ? EventLoopGate.targets.contains(target) : request.method == .post && target == EventLoopRiskQueries.path
    }

    /// The answer to a whole request, or nil to pass it on: given now, or later (a fresh token's risk
    /// query, for which `mayStart` is asked for a place among the requests in flight). `peer` is asked
    /// only for the access log's line.
    func answer(
        _ request: HTTPRequest,
        body: ByteBuffer?,
        peer: () -> SocketAddress?,
        on eventLoop: any EventLoop,
        mayStart: () -> Bool
    ) -> EventLoopAnswer? {
        let start = ContinuousClock.now
        // Made when an answer needs it (a problem's body, the header), not for a request passed on.
        var madeID: String?
        func requestID() -> String {
            if let madeID { return madeID }
            let id = RequestIDMiddleware.acceptable(request.headerFields.value(RequestIDMiddleware.header)) ?? UUID.random().text
            madeID = id
            return id
        }
        let route: String
        let answer: EventLoopAnswer
        switch request.method {
        case .get:
            guard let response = gate.answer(request) else { return nil }
            (route, answer) = (EventLoopGate.path, .now((response, nil)))
        case .post:
            guard
                let given = riskQueries.answer(
                    request,
                    body: body ?? ByteBuffer(),
                    requestID: requestID,
                    logger: logger,
                    on: eventLoop,
                    mayStart: mayStart
                )
            else { return nil }
            (route, answer) = (EventLoopRiskQueries.path, given)
        default:
            return nil
        }
        let identified = requestID()
        // Only a line to be written asks for the peer: a fresh query's answer comes after it may be gone.
        let logged = logger.logLevel <= .info
        let client = logged ? clientAddress(request, peer: peer()) : nil
        switch answer {
        case .now(let response):
            return .now(finished(response, route: route, method: request.method, requestID: identified, logged: logged, client: client, since: start))
        case .later(let future):
            return .later(
                future.map { response in
                    self.finished(response, route: route, method: request.method, requestID: identified, logged: logged, client: client, since: start)
                }
            )
        }
    }

    /// The answer with what the router's would carry: the request id, the metrics, the access log's line.
    private func finished(
        _ response: (HTTPResponse, ByteBuffer?),
        route: String,
        method: HTTPRequest.Method,
        requestID: String,
        logged: Bool,
        client: String?,
        since start: ContinuousClock.Instant
    ) -> (HTTPResponse, ByteBuffer?) {
        var answer = response
        answer.0.headerFields[RequestIDMiddleware.header] = requestID
        answered[route]?.increment()
        metrics.record(route: route, method: method, status: answer.0.status, since: start)
        if logged {
            var logger = logger
            logger[metadataKey: RequestIDMiddleware.metadataKey] = .string(requestID)
            AccessLogMiddleware.log(to: logger, method: method, route: route, status: Int(answer.0.status.code), since: start, client: client)
        }
        return answer
    }

    private func clientAddress(_ request: HTTPRequest, peer: SocketAddress?) -> String? {
        ClientAddress.resolve(
            peer: peer?.ipAddress,
            forwardedFor: request.headerFields[values: ClientAddressMiddleware.forwardedFor].joined(separator: ","),
            trustedProxies: trustedProxies
        )
    }
}

/// An answer given on the event loop: now, or when a fresh token's risk query is written.
enum EventLoopAnswer {
    case now((HTTPResponse, ByteBuffer?))
    case later(EventLoopFuture<(HTTPResponse, ByteBuffer?)>)
}
