import Foundation
import HTTPTypes
import Hummingbird
import Logging

/// One structured log line per request, after it is answered: method, route pattern, status and
/// duration, tagged with the request id. Headers and bodies are never logged (they carry credentials).
struct AccessLogMiddleware: RouterMiddleware {
    typealias Context = GatehouseRequestContext

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        let start = ContinuousClock.now
        do {
            let response = try await next(request, context)
            log(request, context, status: Int(response.status.code), since: start)
            return response
        } catch let error as any HTTPResponseError {
            log(request, context, status: Int(error.status.code), since: start)
            throw error
        }
    }

    private func log(_ request: Request, _ context: Context, status: Int, since start: ContinuousClock.Instant) {
        Self.log(
            to: context.logger,
            method: request.method,
            route: context.endpointPath ?? "unmatched",
            status: status,
            since: start,
            client: context.clientAddress
        )
    }

    /// The line, also for the answers given before the router (`EventLoopGate`).
    static func log(to logger: Logger, method: HTTPRequest.Method, route: String, status: Int, since start: ContinuousClock.Instant, client: String?)
    {
        let elapsed = ContinuousClock.now - start
        let milliseconds = Double(elapsed.components.seconds) * 1000 + Double(elapsed.components.attoseconds) / 1e15
        logger.info(
            "request",
            metadata: [
                "method": .string(method.rawValue),
                "route": .string(route),
                "status": .stringConvertible(status),
                "duration_ms": .string(String(format: "%.2f", milliseconds)),
                "client": .string(client ?? "-"),
            ]
        )
    }
}
