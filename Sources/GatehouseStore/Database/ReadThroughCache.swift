import Synchronization

/// This instance's copies of rows that nearly every request reads and operators rarely change (an app
/// with its sealed secrets, its attesters, its risk rules and lists), so that a request spends its
/// database round trips on the rows it writes. Every audited change made through this store empties
/// every store's copies (`StoreChanges`); a change made through another instance or the command-line tool is
/// seen once the copy is `lifetime` old. Expiry runs on the monotonic clock: it measures an age, not
/// a time of day, so it is not the service's clock.
///
/// One load per key at a time: requests that miss while a load runs wait for it instead of each
/// reading the row. Without that, every request in flight when a copy aged out read the database at
/// once; under 2,000 connections that stampede, every 2 s, was most of the flood's latency tail
/// (docs/PERFORMANCE.md).
final class ReadThroughCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    private struct State {
        var entries: [Key: (value: Value, loadedAt: ContinuousClock.Instant)] = [:]
        /// The load running for a key, with the generation it began in.
        var loads: [Key: (task: Task<Value?, any Error>, generation: Int)] = [:]
        /// The count of changes these entries were read after.
        var generation = 0
    }

    private enum Lookup {
        case fresh(Value)
        case loading(Task<Value?, any Error>)
    }

    private let state = Mutex(State())
    private let lifetime: Duration
    private let capacity: Int
    /// Counted by every audited change of any store: a change empties every store's copies (an
    /// attester's change is a risk policy's too), and a load that began before a change keeps nothing.
    private let changes: StoreChanges

    /// - Parameter capacity: entries kept at most; past it the cache starts over (it holds apps, which
    ///   are few, so this only bounds memory against a flood of distinct keys).
    init(lifetime: Duration, changes: StoreChanges = StoreChanges(), capacity: Int = 10_000) {
        self.lifetime = lifetime
        self.changes = changes
        self.capacity = capacity
    }

    /// The copy of `key`'s value if it is fresh, else what `load` reads (kept unless it is nil: a row
    /// that does not exist yet must be found as soon as it is created). A load already running for
    /// `key` is joined, not repeated.
    func value(
        for key: Key,
        load: @escaping @Sendable () async throws(StoreError) -> Value?
    ) async throws(StoreError) -> Value? {
        let now = ContinuousClock.now
        let lookup: Lookup = state.withLock { state in
            let changed = changes.count
            if state.generation != changed {
                state.entries.removeAll()
                state.loads.removeAll()
                state.generation = changed
            }
            if let entry = state.entries[key], now - entry.loadedAt < lifetime { return .fresh(entry.value) }
            if let load = state.loads[key], load.generation == state.generation { return .loading(load.task) }
            let generation = state.generation
            let task = Task { () async throws -> Value? in
                do {
                    let loaded = try await load()
                    self.keep(loaded, for: key, loadedAt: now, generation: generation)
                    return loaded
                } catch {
                    self.forgetLoad(of: key, generation: generation)
                    throw error
                }
            }
            state.loads[key] = (task, generation)
            return .loading(task)
        }
        switch lookup {
        case .fresh(let value):
            return value
        case .loading(let running):
            do {
                return try await running.value
            } catch let error as StoreError {
                throw error
            } catch {
                throw .unavailable("\(error)")
            }
        }
    }

    /// The copy of `key`'s value if one is fresh, and nil otherwise, without loading it: for answers
    /// given where no load can be awaited (on the event loop, `EventLoopAnswers`), which leave every
    /// miss to the path that loads.
    func freshValue(for key: Key) -> Value? {
        let now = ContinuousClock.now
        return state.withLock { state in
            guard state.generation == changes.count, let entry = state.entries[key], now - entry.loadedAt < lifetime else { return nil }
            return entry.value
        }
    }

    private func keep(_ loaded: Value?, for key: Key, loadedAt: ContinuousClock.Instant, generation: Int) {
        state.withLock { state in
            guard state.generation == generation, changes.count == generation else { return }
            state.loads[key] = nil
            guard let loaded else { return }
            if state.entries.count >= capacity { state.entries.removeAll(keepingCapacity: true) }
            state.entries[key] = (loaded, loadedAt)
        }
    }

    private func forgetLoad(of key: Key, generation: Int) {
        state.withLock { state in
            if state.loads[key]?.generation == generation { state.loads[key] = nil }
        }
    }

    /// Forgets every copy of every cache that shares this one's changes.
    func empty() { changes.record() }
}
