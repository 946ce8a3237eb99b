import Foundation
import HTTPTypes
import Hummingbird
import Prometheus

/// Counts requests and records their latency by route pattern, method and status, into the
/// application's own Prometheus registry (no global metrics state, so tests can read their own).
struct MetricsMiddleware: RouterMiddleware {
    typealias Context = GatehouseRequestContext
    static let buckets: [Duration] = [
        .milliseconds(1), .milliseconds(2), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
        .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .seconds(2.5), .seconds(5),
    ]

    static var requests: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "gatehouse",
            subsystem: "http",
            metricName: "requests",
            unitName: "total",
            helpText: "HTTP requests by route pattern, method and status."
        )
    }
    static var duration: MetricNameDescriptor {
        MetricNameDescriptor(
            namespace: "gatehouse",
            subsystem: "http",
            metricName: "request_duration",
            unitName: "seconds",
            helpText: "HTTP request latency by route pattern, method and status."
        )
    }

    struct Labels: Hashable, Sendable {
        let route: String
        let method: HTTPRequest.Method
        let status: Int
    }

    let handles: MetricHandles<Labels, (requests: Counter, duration: DurationHistogram)>

    init(registry: PrometheusCollectorRegistry) {
        handles = MetricHandles { key in
            let labels = [("route", key.route), ("method", key.method.rawValue), ("status", String(key.status))]
            return (
                registry.makeCounter(descriptor: Self.requests, labels: labels),
                registry.makeDurationHistogram(descriptor: Self.duration, labels: labels, buckets: Self.buckets)
            )
        }
    }

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            record(request, context, response.status, since: start)
            return response
        } catch let error as any HTTPResponseError {
            record(request, context, error.status, since: start)
            throw error
        } catch {
            record(request, context, .internalServerError, since: start)
            throw error
        }
    }

    private func record(_ request: Request, _ context: Context, _ status: HTTPResponse.Status, since start: ContinuousClock.Instant) {
        record(route: context.endpointPath ?? "unmatched", method: request.method, status: status, since: start)
    }

    /// One request answered: also for the answers given before the router (`EventLoopGate`).
    func record(route: String, method: HTTPRequest.Method, status: HTTPResponse.Status, since start: ContinuousClock.Instant) {
        let found = handles(Labels(route: route, method: method, status: status.code))
        found.requests.increment()
        found.duration.record(ContinuousClock.now - start)
    }
}
