import GatehouseCore
import GatehouseStore
import Hummingbird
import Prometheus

/// Every capability's routes, each controller given the operations of its audience. Returns the
/// SDK's operations too: the SDK group's guard checks signatures with them.
func capabilityRoutes(
    _ configuration: GatehouseConfiguration,
    store: SQLStore,
    box: SecretBox,
    clock: any GatehouseClock,
    registry: PrometheusCollectorRegistry,
    apps operations: AppOperations,
    trust: AttestationTrustSource
) -> (RouteRegistrar, SDKOperations) {
    var routes = RouteRegistrar()
    HealthController(store: store, registry: registry).register(on: &routes)
    AdminAppsController(operations: operations, clock: clock).register(on: &routes)
    BackendController().register(on: &routes)

    let sdkOperations = SDKOperations(store: store, box: box, clock: clock)
    SDKController(operations: sdkOperations).register(on: &routes)
    RiskController(risk: RiskQueryOperations(store: store, keys: ServerKeys(box: box), clock: clock)).register(on: &routes)
    AdminRiskController(risk: RiskAdminOperations(store: store, apps: operations, clock: clock)).register(on: &routes)
    let signingKeys = SigningKeyRing(store: store, box: box, clock: clock)
    let signatures = SignatureOperations(store: store, box: box, clock: clock)
    let limits = RateLimits(
        captchaChallengesPerMinute: configuration.captchaChallengesPerMinute,
        captchaAnswersPerMinute: configuration.captchaAnswersPerMinute,
        attestRequestsPerMinute: configuration.attestRequestsPerMinute
    )
    let attesterAccess = AttesterAccess(store: store, apps: operations, box: box, keys: signingKeys, clock: clock)
    let attesters = AttesterOperations(access: attesterAccess)
    let attestationGate = AttestationGateOperations(access: attesterAccess, signatures: signatures)
    AttestationSDKController(sdk: AttestationSDKOperations(access: attesterAccess, issuer: configuration.issuer, limits: limits, trust: trust))
        .register(on: &routes)
    AttestationGateController(gate: attestationGate).register(on: &routes)
    AdminAttestationController(attesters: attesters).register(on: &routes)
    CaptchaController(
        captcha: CaptchaOperations(store: store, apps: operations, clock: clock, limits: limits),
        embedOrigins: configuration.captchaEmbedOrigins
    ).register(on: &routes)
    SignatureController(signatures: signatures).register(on: &routes)
    let upstream = STSClient(allowInternalEndpoints: configuration.stsPrivateEndpoints)
    AdminSTSController(
        roles: STSRoleOperations(store: store, apps: operations, box: box, clock: clock, allowInternalEndpoints: upstream.allowInternalEndpoints)
    ).register(on: &routes)
    let sts = STSOperations(
        store: store,
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
    return (routes, sdkOperations)
}

/// Each audience's guard; the probes and the open routes have none.
func audienceGuards(
    _ configuration: GatehouseConfiguration,
    store: SQLStore,
    clock: any GatehouseClock,
    apps: AppOperations,
    sdk: SDKOperations
) throws -> [Audience: any MiddlewareProtocol<Request, Response, GatehouseRequestContext>] {
    let gateCredentialHeader = try GatewayCredential.header(named: configuration.gateCredentialHeader)
    return [
        .operators: AdminAuthMiddleware(tokens: store, clock: clock, access: .write),
        .operatorReads: AdminAuthMiddleware(tokens: store, clock: clock, access: .read),
        .backend: BackendAuthMiddleware(apps: apps, header: .authorization),
        .gateway: BackendAuthMiddleware(apps: apps, header: gateCredentialHeader),
        .sdk: SDKAuthMiddleware(operations: sdk),
    ]
}
