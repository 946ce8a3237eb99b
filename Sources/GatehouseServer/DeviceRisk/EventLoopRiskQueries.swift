import GatehouseCore
import GatehouseOperations
import GatehouseStore
import HTTPTypes
import Logging
import NIOCore

/// A risk query answered from the event loop (`EventLoopAnswers`) when the backend's credential and
/// the app's policy are in this instance's memory, with the router's JSON (`RiskController`):
/// - a ztoken refused before any read (forged, expired, another app's, event's or account's) is
///   decided, counted and written behind at once: a forged flood is the traffic an attacker controls
///   the rate of, and this is its whole cost;
/// - a ztoken that may be fresh goes to the store's group commit in a task on the connection's own
///   event loop, and its answer is written when the batch holding it is. Through the router it was
///   checked twice (here, then by the router's guard and handler), hopped to Swift's pool and back,
///   and passed the router's middleware: a third of the server's CPU at half the peak rate
///   (docs/PERFORMANCE.md, issue 34).
///
/// Anything else (values the query refuses, a stale copy, no slot free) goes on to the router. A
/// class, as `EventLoopAnswers` is: a struct of operations was copied, every reference in it retained
/// and released, on each request the forged flood sends.
final class EventLoopRiskQueries: Sendable {
    static let path = "/v1/risk/query"

    let apps: AppOperations
    let risk: RiskQueryOperations

    init(apps: AppOperations, risk: RiskQueryOperations) {
        self.apps = apps
        self.risk = risk
    }

    /// The answer to a whole request, or nil to pass it on. A body the router would refuse (its media
    /// type, malformed JSON, a missing, unknown or mistyped field) gets the router's problem here, once
    /// the credential holds: deciding that takes no more than the refusal. A fresh token's query starts
    /// only if `mayStart` gives it a place among the requests in flight.
    func answer(
        _ request: HTTPRequest,
        body: ByteBuffer,
        requestID: () -> String,
        logger: Logger,
        on eventLoop: any EventLoop,
        mayStart: () -> Bool
    ) -> EventLoopAnswer? {
        guard case .success(let presented) = BackendCredentials.presented(inAuthorization: request.headerFields.value(.authorization)),
            let admitted = apps.admitBackendInMemory(appKey: presented.appKey, secret: presented.secret)
        else { return nil }
        let input: RiskQueryBody
        do {
            input = try RiskQueryBody.decode(body, contentType: request.headerFields.value(.contentType))
        } catch {
            return .now(error.rendered(requestID: requestID()))
        }
        let appKey = admitted.app.appKey
        switch risk.inMemory(
            ztoken: input.ztoken,
            eventID: input.eventID,
            accountID: input.accountID,
            clientIP: input.clientIP,
            userAgent: input.userAgent,
            app: admitted.app
        ) {
        case nil:
            return nil
        case .refused(let recorded):
            return .now(RiskDecisionJSON.rendered(recorded.record, appKey: appKey, device: recorded.facts.device))
        case .fresh(let query):
            guard mayStart() else { return nil }
            let promise = eventLoop.makePromise(of: (HTTPResponse, ByteBuffer?).self)
            let (risk, identified) = (risk, requestID())
            Task(executorPreference: EventLoopTaskExecutor(eventLoop)) {
                do {
                    let recorded = try await risk.record(query)
                    promise.succeed(RiskDecisionJSON.rendered(recorded.record, appKey: appKey, device: recorded.facts.device))
                } catch {
                    var logger = logger
                    logger[metadataKey: RequestIDMiddleware.metadataKey] = .string(identified)
                    promise.succeed(ProblemMiddleware.problem(for: error, logger: logger).rendered(requestID: identified))
                }
            }
            return .later(promise.futureResult)
        }
    }
}
