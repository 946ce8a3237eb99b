import GatehouseCore
import GatehouseOperations
import HTTPTypes

/// The gate's "let through", given on the event loop (`EventLoopAnswers`) when all it takes is in this
/// instance's memory: the gateway's credential checked against the app's fresh copy, the app's
/// attesters, and a token this instance verified before, with its key. nginx asks the gate before
/// every protected request, nearly always with a token it asked about a moment earlier. Anything else
/// (every refusal and challenge, a token not seen before, one with use limits, a signature to check, a
/// stale copy) goes on to the router, which answers as it always has; both decide with the same
/// functions and count the same verdicts.
struct EventLoopGate: Sendable {
    static let path = "/v1/gate/verify"
    /// The gate's path as the router knows it, with no query or with the one parameter the gate reads
    /// in one of its two values (which a request let through does not depend on). Every other spelling
    /// goes to the router, which refuses or redirects it as it does for any route.
    static let targets: Set<String> = [path, path + "?challengeStatus=401", path + "?challengeStatus=428"]

    let apps: AppOperations
    let gate: AttestationGateOperations
    let credentialHeader: HTTPField.Name
    let onVerdict: @Sendable (AttestVerdictLabels) -> Void

    /// The 204 for `request` when it can be given here; nil to pass the request on.
    func answer(_ request: HTTPRequest) -> HTTPResponse? {
        guard case .success(let presented) = BackendCredentials.presented(inAuthorization: request.headerFields.value(credentialHeader)),
            let admitted = apps.admitBackendInMemory(appKey: presented.appKey, secret: presented.secret),
            let original = try? AttestationGateController.originalRequest(request.headerFields),
            let answer = gate.gateInMemory(
                app: admitted.app,
                method: original.method,
                uri: original.uri,
                header: { name in HTTPField.Name(name).flatMap { request.headerFields.value($0) } }
            ),
            case .success(let headers) = AttestationGateController.letThrough(answer.verdict, challengeStatus: .unauthorized)
        else { return nil }
        AttestationGateController.count(answer, of: admitted.app.appKey, onVerdict: onVerdict)
        return HTTPResponse(status: .noContent, headerFields: headers)
    }
}
