import Foundation
import GatehouseCore
import GatehouseOperations
import GatehouseStore
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import Prometheus

/// Builds the whole service from its configuration: the store, the routes, the middleware. `gatehouse
/// serve` runs what this returns; tests call it too.
public func buildApplication(
    _ configuration: GatehouseConfiguration,
    clock: any GatehouseClock = SystemClock(),
    logger baseLogger: Logger? = nil
) async throws -> some ApplicationProtocol {
    var logger = baseLogger ?? Logger(label: "gatehouse", factory: DeferredMetadataLogHandler.init)
    logger.logLevel = configuration.logLevel
    let box = try openSecretBox(configuration, logger: logger)
    _ = try GatewayCredential.header(named: configuration.gateCredentialHeader)  // refused before the store opens, not after
    logger.info("opening store", metadata: ["location": .string(configuration.storeLocation.description)])
    let storeService = try await StoreService.open(
        configuration.storeLocation,
        maximumConnections: configuration.databaseMaxConnections,
        operationTimeout: .seconds(configuration.databaseTimeoutSeconds),
        logger: logger
    )
    let store = storeService.store
    let registry = PrometheusCollectorRegistry()
    let operations = AppOperations(store: store, box: box, clock: clock)

    let (router, admission) = try await closingOnRefusal(storeService) {
        try await routerAndAdmission(configuration, store: store, box: box, clock: clock, registry: registry, apps: operations, logger: logger)
    }

    var app = Application(
        responder: CanonicalPathResponder(routes: router.buildResponder()),
        server: .http1(admitting: admission, configuration),
        configuration: listener(configuration, logger: logger),
        services: [storeService],
        onServerRunning: { listener in
            _ = try? await listener.setOption(ChannelOptions.maxMessagesPerRead, value: ConnectionLimit.acceptsPerWakeup).get()
        },
        logger: logger
    )
    if let probePort = configuration.probePort {
        let health = HealthController(store: store, devices: store.deviceRisk, registry: registry)
        app.addServices(ProbeListener.make(configuration, port: probePort, health: health, logger: logger))
    }
    let purger = RetentionPurger(configuration, store: store.retention, clock: clock, logger: logger)
    app.addServices(purger)
    let isDevelopmentDefault = configuration.databaseURL == nil
    let startLogger = logger
    app.beforeServerStarts {
        if try await prepareStore(store, box: box, migrate: configuration.migrateAtStart, logger: startLogger) {
            // The time ranges exist before the first request: creating one holds its table's writes
            // for a moment, which is better done before anyone writes.
            await purger.keepPartitions()
        }
        if isDevelopmentDefault {
            try await printDevelopmentAdminToken(store: store, clock: clock)
        }
    }
    return app
}

/// Runs what may refuse the start after the store opened (an unreadable attestation file, missing
/// pages), closing the store if it does: an open database left to its deinitializer stops the process
/// with a trap.
private func closingOnRefusal<T>(_ store: StoreService, _ body: () async throws -> T) async throws -> T {
    do {
        return try await body()
    } catch {
        await store.close()
        throw error
    }
}

/// The routes behind their guards and middleware, and the admission policy that knows their audiences.
func routerAndAdmission(
    _ configuration: GatehouseConfiguration,
    store: SQLStore,
    box: SecretBox,
    clock: any GatehouseClock,
    registry: PrometheusCollectorRegistry,
    apps operations: AppOperations,
    logger: Logger
) async throws -> (Router<GatehouseRequestContext>, AdmissionPolicy) {
    let trust = try AttestationTrustSource(configuration, logger: logger)
    let console = try await ConsolePages.load()
    let router = Router(context: GatehouseRequestContext.self)
    let (routes, sdk, gate, riskQueries) = capabilityRoutes(
        configuration,
        store: store,
        box: box,
        clock: clock,
        registry: registry,
        apps: operations,
        trust: trust,
        console: console,
        captcha: try CaptchaAssets.load()
    )
    let guards = try audienceGuards(configuration, store: store, clock: clock, apps: operations, sdk: sdk, console: console, routes: routes.table)
    let metrics = MetricsMiddleware(registry: registry)
    installMiddleware(on: router, routes: routes, configuration, metrics: metrics, guards: guards)
    let answers = EventLoopAnswers(
        gate: EventLoopGate(
            apps: operations,
            gate: gate.gate,
            credentialHeader: try GatewayCredential.header(named: configuration.gateCredentialHeader),
            onVerdict: gate.onVerdict
        ),
        riskQueries: EventLoopRiskQueries(apps: operations, risk: riskQueries),
        maxBodyBytes: configuration.maxBodyBytes,
        metrics: metrics,
        registry: registry,
        trustedProxies: configuration.trustedProxies,
        logger: logger
    )
    let admission = AdmissionPolicy(limit: InFlightLimit(capacity: configuration.maxInFlight), routes: routes.table, answers: answers)
    return (router, admission)
}

/// The serving port. A burst of new connections waits in the kernel instead of being dropped: a
/// dropped SYN is retried after 1 s, then 3 s, which is what a probe or a client would see.
private func listener(_ configuration: GatehouseConfiguration, logger: Logger) -> ApplicationConfiguration {
    ApplicationConfiguration(
        address: .hostname(configuration.hostname, port: configuration.port),
        serverName: HTTPDateText.serverName,
        backlog: 4096,
        availableConnectionsDelegate: .maximum(ConnectionLimit.allowed(configuration.maxConnections), logger: logger)
    )
}

/// What every request meets before its route group (request ids, the client's address and body
/// limits, metrics, the access log, problems), then each audience's group behind its guard.
private func installMiddleware(
    on router: Router<GatehouseRequestContext>,
    routes: RouteRegistrar,
    _ configuration: GatehouseConfiguration,
    metrics: MetricsMiddleware,
    guards: [Audience: any MiddlewareProtocol<Request, Response, GatehouseRequestContext>]
) {
    router.addMiddleware {
        RetryAfterMiddleware()
        RequestIDMiddleware()
        ClientAddressMiddleware(
            trustedProxies: configuration.trustedProxies,
            maxBodyBytes: configuration.maxBodyBytes,
            bodyTimeout: .seconds(configuration.bodyTimeoutSeconds)
        )
        metrics
        AccessLogMiddleware()
        ProblemMiddleware(routes: routes.table)
    }
    routes.install(on: router, errors: [.sdk: .sdk, .captcha: .captcha, .sts: .sts], guards: guards)
}

/// The master key's box; a development key generated for a newcomer is said in the log.
private func openSecretBox(_ configuration: GatehouseConfiguration, logger: Logger) throws -> SecretBox {
    let (box, generatedKeyPath) = try configuration.loadSecretBox()
    if let generatedKeyPath {
        logger.warning(
            "generated a development master key; set GATEHOUSE_MASTER_KEY in production",
            metadata: ["path": .string(generatedKeyPath)]
        )
    }
    return box
}

/// In the zero-configuration SQLite mode, the first start prints an admin token so that a newcomer
/// can call the admin API at once. Printed to the terminal, not logged.
private func printDevelopmentAdminToken(store: SQLStore, clock: any GatehouseClock) async throws {
    guard try await !store.admin.hasAdminTokens() else { return }
    let token = try await AdminTokenOperations(store: store.admin, clock: clock).create(
        name: "dev",
        origin: ChangeOrigin(actor: Actor(kind: .cli, name: "serve"), requestID: nil, sourceAddress: nil)
    )
    let banner = """

        ==> Development admin token (shown once; create more with `gatehouse admin-token create --name NAME`):
            \(token)


        """
    FileHandle.standardOutput.write(Data(banner.utf8))
}
