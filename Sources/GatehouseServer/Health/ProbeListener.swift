import GatehouseOperations
import Hummingbird
import Logging
import NIOCore
import NIOPosix
import ServiceLifecycle

/// The probes on a port of their own (`GATEHOUSE_PROBE_PORT`), served by an event loop of their own.
/// On the serving port a probe waits behind every connection its event loop is reading: under a
/// closed-loop flood of 2,000 connections that was up to 0.7 s however cheaply the
/// flood was shed. Here nothing but the orchestrator and Prometheus shares the loop, so liveness and
/// readiness say how the process is, not how busy its port is. The serving port keeps the probes too.
enum ProbeListener {
    static func make(
        _ configuration: GatehouseConfiguration,
        port: Int,
        health: HealthController,
        logger: Logger
    ) -> [any Service] {
        var routes = RouteRegistrar()
        health.register(on: &routes)
        let router = Router(context: GatehouseRequestContext.self)
        router.addMiddleware {
            RetryAfterMiddleware()
            RequestIDMiddleware()
            ProblemMiddleware(routes: routes.table)
        }
        routes.install(on: router, errors: [:], guards: [:])
        let admission = AdmissionPolicy(
            limit: InFlightLimit(capacity: configuration.maxInFlight),
            routes: routes.table,
            answersLiveness: true
        )
        let loop = MultiThreadedEventLoopGroup(numberOfThreads: 1)
        let listener = Application(
            responder: CanonicalPathResponder(routes: router.buildResponder()),
            server: .http1(admitting: admission, configuration),
            configuration: .init(address: .hostname(configuration.hostname, port: port), serverName: HTTPDateText.serverName, backlog: 256),
            eventLoopGroupProvider: .shared(loop),
            logger: logger
        )
        // Listed before the listener, so the group shuts down after it.
        return [EventLoopGroupCloser(group: loop), listener]
    }
}

/// Shuts a dedicated event loop group down once the service group shuts down gracefully.
private struct EventLoopGroupCloser: Service {
    let group: MultiThreadedEventLoopGroup

    func run() async throws {
        try? await gracefulShutdown()
        try await group.shutdownGracefully()
    }
}
