import GatehouseCore
import GatehouseOperations
import GatehouseStore
import Hummingbird
import Prometheus

/// Every capability's routes, each controller given the operations of its audience. Returns the
/// SDK's operations too (the SDK group's guard checks signatures with them), and the gate's controller
/// and the risk queries' operations (the event loop answers some of their requests, `EventLoopAnswers`).
/// Over 60 lines: a flat list of wiring, one controller after another, with nothing to decide.
func capabilityRoutes(
    _ configuration: GatehouseConfiguration,
    store: SQLStore,
    box: SecretBox,
    clock: any GatehouseClock,
    registry: PrometheusCollectorRegistry,
    apps operations: AppOperations,
    trust: AttestationTrustSource,
    console pages: ConsolePages,
    captcha captchaAssets: CaptchaAssets
) -> (RouteRegistrar, SDKOperations, AttestationGateController, RiskQueryOperations) {
    var routes = RouteRegistrar()
    HealthController(store: store, devices: store.deviceRisk, registry: registry).register(on: &routes)
    AdminAppsController(operations: operations, clock: clock).register(on: &routes)
    BackendController().register(on: &routes)

    let sdkOperations = SDKOperations(store: store.deviceRisk, apps: store.apps, box: box, clock: clock)
    SDKController(operations: sdkOperations).register(on: &routes)
    let labels = DecisionLabelOperations(store: store.deviceRisk, apps: operations, clock: clock)
    let riskQueries = RiskQueryOperations(store: store.deviceRisk, keys: ServerKeys(box: box), clock: clock)
    RiskController(risk: riskQueries, labels: labels).register(on: &routes)
    let riskAdmin = RiskAdminOperations(store: store.deviceRisk, apps: operations, clock: clock)
    AdminRiskController(risk: riskAdmin, labels: labels).register(on: &routes)
    AdminPolicyRulesController(rules: PolicyRuleOperations(store: store.deviceRisk, apps: operations, clock: clock)).register(on: &routes)
    AdminPolicyVersionsController(
        versions: PolicyVersionOperations(store: store.deviceRisk, apps: operations, clock: clock),
        replays: ReplayOperations(store: store.deviceRisk, apps: operations, clock: clock),
        shadows: ShadowOperations(store: store.deviceRisk, apps: operations, clock: clock)
    )
    .register(on: &routes)
    let signingKeys = SigningKeyRing(store: store.attestation, box: box, clock: clock)
    let signatures = SignatureOperations(store: store.signatures, devices: store.deviceRisk, captcha: store.captcha, box: box, clock: clock)
    let limits = RateLimits(
        captchaChallengesPerMinute: configuration.captchaChallengesPerMinute,
        captchaAnswersPerMinute: configuration.captchaAnswersPerMinute,
        attestRequestsPerMinute: configuration.attestRequestsPerMinute
    )
    let attesterAccess = AttesterAccess(
        store: store,
        apps: operations,
        box: box,
        keys: signingKeys,
        clock: clock,
        allowInternalEndpoints: configuration.stsPrivateEndpoints
    )
    let attesters = AttesterOperations(access: attesterAccess)
    let attestationGate = AttestationGateOperations(access: attesterAccess, signatures: signatures)
    let google = PlayIntegrityClient(
        allowInternalEndpoints: configuration.stsPrivateEndpoints,
        deadlineMilliseconds: configuration.playIntegrityTimeoutMilliseconds
    )
    AttestationSDKController(
        sdk: AttestationSDKOperations(access: attesterAccess, issuer: configuration.issuer, limits: limits, trust: trust, playIntegrity: google)
    )
    .register(on: &routes)
    let verdicts = MetricHandles { (labels: AttestVerdictLabels) in
        registry.makeCounter(
            name: "gatehouse_attest_verdicts_total",
            labels: [
                ("app", labels.app.rawValue), ("attester", labels.attester.rawValue), ("route", labels.route),
                ("verdict", labels.verdict.rawValue), ("enforcement", labels.monitored ? "monitor" : "enforce"),
            ]
        )
    }
    let gateController = AttestationGateController(gate: attestationGate) { verdicts($0).increment() }
    gateController.register(on: &routes)
    AdminAttestationController(attesters: attesters).register(on: &routes)
    CaptchaController(
        captcha: CaptchaOperations(store: store.captcha, attesters: store.attestation, apps: operations, clock: clock, limits: limits),
        assets: captchaAssets,
        embedOrigins: configuration.captchaEmbedOrigins
    ).register(on: &routes)
    SignatureController(signatures: signatures).register(on: &routes)
    let roles = stsRoutes(
        configuration,
        store: store,
        box: box,
        clock: clock,
        registry: registry,
        apps: operations,
        attesters: attesters,
        gate: attestationGate,
        on: &routes
    )
    ConsoleControllers(
        pages: pages,
        store: store,
        clock: clock,
        apps: operations,
        risk: riskAdmin,
        labels: labels,
        attesters: attesters,
        roles: roles,
        keys: signingKeys,
        registry: registry
    )
    .register(on: &routes)
    return (routes, sdkOperations, gateController, riskQueries)
}

/// STS roles for operators and credentials for devices; returns the roles' operations for the console.
func stsRoutes(
    _ configuration: GatehouseConfiguration,
    store: SQLStore,
    box: SecretBox,
    clock: any GatehouseClock,
    registry: PrometheusCollectorRegistry,
    apps operations: AppOperations,
    attesters: AttesterOperations,
    gate attestationGate: AttestationGateOperations,
    on routes: inout RouteRegistrar
) -> STSRoleOperations {
    let upstream = STSClient(allowInternalEndpoints: configuration.stsPrivateEndpoints)
    let roles = STSRoleOperations(store: store.sts, apps: operations, box: box, clock: clock, allowInternalEndpoints: upstream.allowInternalEndpoints)
    AdminSTSController(roles: roles).register(on: &routes)
    let sts = STSOperations(
        store: store.sts,
        activity: store.deviceRisk,
        apps: operations,
        attesters: attesters,
        attestation: attestationGate,
        box: box,
        clock: clock,
        sts: upstream,
        onUpstreamCall: { provider in
            registry.makeCounter(name: "gatehouse_sts_upstream_calls_total", labels: [("provider", provider.rawValue)]).increment()
        }
    )
    STSController(sts: sts).register(on: &routes)
    return roles
}

/// The console's pages, over the same operations as the admin API.
struct ConsoleControllers {
    let pages: ConsolePages
    let store: SQLStore
    let clock: any GatehouseClock
    let apps: AppOperations
    let risk: RiskAdminOperations
    let labels: DecisionLabelOperations
    let attesters: AttesterOperations
    let roles: STSRoleOperations
    let keys: SigningKeyRing
    let registry: PrometheusCollectorRegistry

    func register(on routes: inout RouteRegistrar) {
        ConsoleSignInController(pages: pages, tokens: store.admin, sessions: store.console, clock: clock, throttle: SignInThrottle()) { reason in
            registry.makeCounter(name: "gatehouse_console_sign_in_failures_total", labels: [("reason", reason)]).increment()
        }
        .register(on: &routes)
        ConsoleAppsController(pages: pages, apps: apps, clock: clock).register(on: &routes)
        ConsoleOverviewController(pages: pages, apps: apps, activity: store.console, clock: clock).register(on: &routes)
        ConsoleDecisionsController(pages: pages, risk: risk, labels: labels).register(on: &routes)
        ConsoleAuditController(pages: pages, apps: apps).register(on: &routes)
        ConsoleAttestersController(pages: pages, attesters: attesters).register(on: &routes)
        ConsoleRiskController(pages: pages, risk: risk).register(on: &routes)
        let rules = PolicyRuleOperations(store: store.deviceRisk, apps: apps, clock: clock)
        let versions = PolicyVersionOperations(store: store.deviceRisk, apps: apps, clock: clock)
        ConsolePolicyController(pages: pages, rules: rules, versions: versions).register(on: &routes)
        let replays = ReplayOperations(store: store.deviceRisk, apps: apps, clock: clock)
        ConsoleReplaysController(pages: pages, replays: replays, versions: versions, rules: rules, clock: clock).register(on: &routes)
        ConsoleRolesController(pages: pages, roles: roles, keys: keys).register(on: &routes)
    }
}

/// Each audience's guard; the probes and the open routes have none.
func audienceGuards(
    _ configuration: GatehouseConfiguration,
    store: SQLStore,
    clock: any GatehouseClock,
    apps: AppOperations,
    sdk: SDKOperations,
    console pages: ConsolePages,
    routes: RouteTable
) throws -> [Audience: any MiddlewareProtocol<Request, Response, GatehouseRequestContext>] {
    let gateCredentialHeader = try GatewayCredential.header(named: configuration.gateCredentialHeader)
    let errors = ConsoleErrorPages(pages: pages, problems: ProblemMiddleware(routes: routes))
    return [
        .consoleEntry: errors,
        .console: ConsoleSessionMiddleware(sessions: store.console, clock: clock, access: .read, errors: errors),
        .consoleChanges: ConsoleSessionMiddleware(sessions: store.console, clock: clock, access: .write, errors: errors),
        .operators: AdminAuthMiddleware(tokens: store.admin, clock: clock, access: .write),
        .operatorReads: AdminAuthMiddleware(tokens: store.admin, clock: clock, access: .read),
        .backend: BackendAuthMiddleware(apps: apps, header: .authorization),
        .gateway: BackendAuthMiddleware(apps: apps, header: gateCredentialHeader),
        .sdk: SDKAuthMiddleware(operations: sdk),
    ]
}
