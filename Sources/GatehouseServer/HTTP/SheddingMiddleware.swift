import GatehouseCore
import HTTPTypes
import Hummingbird
import Synchronization

/// Requests this instance is working on now, across every route group but the probes.
final class InFlightLimit: Sendable {
    let capacity: Int
    private let current = Atomic<Int>(0)

    init(capacity: Int) {
        self.capacity = capacity
    }

    var inFlight: Int { current.load(ordering: .relaxed) }

    /// Takes a slot, or answers false at once when all are taken.
    func enter() -> Bool {
        if current.wrappingAdd(1, ordering: .acquiring).newValue > capacity {
            current.wrappingSubtract(1, ordering: .releasing)
            return false
        }
        return true
    }

    func leave() {
        current.wrappingSubtract(1, ordering: .releasing)
    }
}

/// First in every route group but the probes: past `GATEHOUSE_MAX_IN_FLIGHT` requests at once, a new
/// one is refused at once with 503 and `Retry-After` (for the SDK its code -8) before it costs a
/// credential check or a database round trip. A queue would only make every answer late; under a
/// flood the instance keeps serving what it admitted within its usual time, and the probes, which
/// are never shed, keep telling the orchestrator it is alive.
struct SheddingMiddleware: RouterMiddleware {
    typealias Context = GatehouseRequestContext
    let limit: InFlightLimit
    let audience: Audience

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard limit.enter() else { throw refusal }
        defer { limit.leave() }
        return try await next(request, context)
    }

    private var refusal: any Error {
        let detail = "This instance is at its limit of \(limit.capacity) requests at once; retry shortly."
        if audience == .sdk { return SDKError(refusal: SDKRefusal(.serverFailure, "overloaded", detail)) }
        return Problem(.serviceUnavailable, code: "overloaded", title: "Overloaded", detail: detail)
    }
}
