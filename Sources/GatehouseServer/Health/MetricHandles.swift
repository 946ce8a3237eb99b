import Synchronization

/// Metric handles of one family, kept by what labels them. The registry finds a handle by name and
/// labels on every call, checking and comparing each label as it goes; a metric moved on every request
/// paid that on every request. The handles stay registered either way, so keeping them holds nothing
/// the registry does not; their number is bounded by what labels them (routes, statuses, attesters).
final class MetricHandles<Key: Hashable & Sendable, Handle: Sendable>: Sendable {
    private let handles = Mutex([Key: Handle]())
    private let make: @Sendable (Key) -> Handle

    init(_ make: @escaping @Sendable (Key) -> Handle) {
        self.make = make
    }

    func callAsFunction(_ key: Key) -> Handle {
        if let found = handles.withLock({ $0[key] }) { return found }
        let made = make(key)
        handles.withLock { $0[key] = made }
        return made
    }
}
