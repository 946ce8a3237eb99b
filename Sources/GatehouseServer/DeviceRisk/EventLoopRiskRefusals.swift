import GatehouseCore
import GatehouseOperations
import HTTPTypes
import NIOCore

/// A risk query whose ztoken is refused before any read (forged, expired, another app's, event's or
/// account's), answered on the event loop (`EventLoopAnswers`) when the backend's credential and the
/// app's policy are in this instance's memory: decided, counted and written behind exactly as the
/// router's `RiskController` does it (`RiskQueryOperations.refusedInMemory`), with the same JSON. A
/// forged flood is the traffic an attacker controls the rate of, and this is its whole cost. Anything
/// else (a token that may be fresh, values the query refuses, a stale copy) goes on to the router. A
/// class, as `EventLoopAnswers` is: a struct of operations was copied, every reference in it retained
/// and released, on each request the forged flood sends.
final class EventLoopRiskRefusals: Sendable {
    static let path = "/v1/risk/query"

    let apps: AppOperations
    let risk: RiskQueryOperations

    init(apps: AppOperations, risk: RiskQueryOperations) {
        self.apps = apps
        self.risk = risk
    }

    /// The decision's 200 for a whole request, or nil to pass it on. A body the router would refuse
    /// (its media type, malformed JSON, a missing, unknown or mistyped field) gets the router's problem
    /// here, once the credential holds: deciding that takes no more than the refusal.
    func answer(_ request: HTTPRequest, body: ByteBuffer, requestID: () -> String) -> (HTTPResponse, ByteBuffer)? {
        guard case .success(let presented) = BackendCredentials.presented(inAuthorization: request.headerFields.value(.authorization)),
            let admitted = apps.admitBackendInMemory(appKey: presented.appKey, secret: presented.secret)
        else { return nil }
        let input: RiskQueryBody
        do {
            input = try RiskQueryBody.decode(body, contentType: request.headerFields.value(.contentType))
        } catch {
            return error.rendered(requestID: requestID())
        }
        guard
            let recorded = risk.refusedInMemory(
                ztoken: input.ztoken,
                eventID: input.eventID,
                accountID: input.accountID,
                clientIP: input.clientIP,
                userAgent: input.userAgent,
                app: admitted.app
            )
        else { return nil }
        return RiskDecisionJSON.rendered(recorded.record, appKey: admitted.app.appKey, device: recorded.facts.device)
    }
}
