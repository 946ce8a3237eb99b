import Foundation
import GatehouseCore
import HTTPTypes
import Logging
import NIOCore
import Prometheus

/// What the serving port answers on its event loop, before Swift concurrency and the router, when this
/// instance holds all the answer takes: the gate letting a request through (`EventLoopGate`) and a
/// risk query whose token, or body, is refused before any read (`EventLoopRiskRefusals`).
/// `AdmissionHandler` holds such a request until its end within the read that brought it; a request
/// declined here, or not whole within that read, goes on to the router as if it had never been held. These are the
/// requests a gateway sends before every protected call and an attacker's forged flood sends at full
/// rate, and for them the hop to a task, the router and the middleware cost more than the decision
/// (docs/PERFORMANCE.md, issue 34). Each answer carries what the router's would: the request id,
/// `gatehouse_http_requests_total` and its latency, the access log's line; and
/// `gatehouse_answers_in_memory_total{route}` counts them. A class: the connection's handler took a
/// copy of the struct it was, with every reference in it retained and released, twice a request.
final class EventLoopAnswers: Sendable {
    static let answeredInMemory = "gatehouse_answers_in_memory_total"

    let gate: EventLoopGate
    let riskRefusals: EventLoopRiskRefusals
    /// A held body longer than this goes to the router, which refuses it (413).
    let maxBodyBytes: Int
    let metrics: MetricsMiddleware
    private let answered: [String: Counter]
    let trustedProxies: [CIDR]
    let logger: Logger

    init(
        gate: EventLoopGate,
        riskRefusals: EventLoopRiskRefusals,
        maxBodyBytes: Int,
        metrics: MetricsMiddleware,
        registry: PrometheusCollectorRegistry,
        trustedProxies: [CIDR],
        logger: Logger
    ) {
        self.gate = gate
        self.riskRefusals = riskRefusals
        self.maxBodyBytes = maxBodyBytes
        self.metrics = metrics
        answered = Dictionary(
            uniqueKeysWithValues: [EventLoopGate.path, EventLoopRiskRefusals.path].map { route in
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
        return request.method == .get ? EventLoopGate.targets.contains(target) : request.method == .post && target == EventLoopRiskRefusals.path
    }

    /// The answer to a whole request, or nil to pass it on. `peer` is asked only for the access log's line.
    func answer(_ request: HTTPRequest, body: ByteBuffer?, peer: () -> SocketAddress?) -> (HTTPResponse, ByteBuffer?)? {
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
        var answer: (HTTPResponse, ByteBuffer?)
        switch request.method {
        case .get:
            guard let response = gate.answer(request) else { return nil }
            (route, answer) = (EventLoopGate.path, (response, nil))
        case .post:
            guard let response = riskRefusals.answer(request, body: body ?? ByteBuffer(), requestID: requestID) else { return nil }
            (route, answer) = (EventLoopRiskRefusals.path, (response.0, response.1))
        default:
            return nil
        }
        let identified = requestID()
        answer.0.headerFields[RequestIDMiddleware.header] = identified
        answered[route]?.increment()
        metrics.record(route: route, method: request.method, status: answer.0.status, since: start)
        if logger.logLevel <= .info {
            var logger = logger
            logger[metadataKey: RequestIDMiddleware.metadataKey] = .string(identified)
            let client = ClientAddress.resolve(
                peer: peer()?.ipAddress,
                forwardedFor: request.headerFields[values: ClientAddressMiddleware.forwardedFor].joined(separator: ","),
                trustedProxies: trustedProxies
            )
            AccessLogMiddleware.log(to: logger, method: request.method, route: route, status: Int(answer.0.status.code), since: start, client: client)
        }
        return answer
    }
}
