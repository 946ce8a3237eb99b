import Synchronization

/// This instance's copies of rows that nearly every request reads and operators rarely change (an app
/// with its sealed secrets, its attesters, its risk rules and lists), so that a request spends its
/// database round trips on the rows it writes. Every audited change made through this store empties
/// them (`SQLStore.changing`); a change made through another instance or the command-line tool is
/// seen once the copy is `lifetime` old. Expiry runs on the monotonic clock: it measures an age, not
/// a time of day, so it is not the service's clock.
final class ReadThroughCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct State {
        var entries: [Key: (value: Value, loadedAt: ContinuousClock.Instant)] = [:]
        /// Bumped by every emptying, so that a load that began before a change does not store what it read.
        var generation = 0
    }

    private let state = Mutex(State())
    private let lifetime: Duration
    private let capacity: Int

    /// - Parameter capacity: entries kept at most; past it the cache starts over (it holds apps, which
    ///   are few, so this only bounds memory against a flood of distinct keys).
    init(lifetime: Duration, capacity: Int = 10_000) {
        self.lifetime = lifetime
        self.capacity = capacity
    }

    /// The copy of `key`'s value if it is fresh, else what `load` reads (kept unless it is nil: a row
    /// that does not exist yet must be found as soon as it is created).
    func value(
        for key: Key,
        load: () async throws(StoreError) -> Value?
    ) async throws(StoreError) -> Value? {
        let now = ContinuousClock.now
        let (cached, generation) = state.withLock { state in
            (state.entries[key].flatMap { now - $0.loadedAt < lifetime ? $0.value : nil }, state.generation)
        }
        if let cached { return cached }
        guard let loaded = try await load() else { return nil }
        state.withLock { state in
            guard state.generation == generation else { return }
            if state.entries.count >= capacity { state.entries.removeAll(keepingCapacity: true) }
            state.entries[key] = (loaded, now)
        }
        return loaded
    }

    func empty() {
        state.withLock { state in
            state.entries.removeAll()
            state.generation += 1
        }
    }
}
