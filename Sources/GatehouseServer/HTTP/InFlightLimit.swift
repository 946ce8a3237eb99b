import Synchronization

/// Connections this instance is working on a request of now, across every route group but the
/// probes (`AdmissionHandler` takes and releases the slots).
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
