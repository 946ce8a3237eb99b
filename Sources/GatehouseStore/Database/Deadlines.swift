import Synchronization

/// One timer for every bounded wait of the process. A `Task.sleep` cancelled early keeps its
/// allocation until its deadline (the runtime's delayed job stays queued until then), so a sleeping
/// bound per request at thousands of requests a second held about a hundred MiB of cancelled sleeps
/// (docs/PERFORMANCE.md, issue 34). Here a bound is an entry in a table, removed the moment its wait
/// ends, and one task wakes every `granularity` while any is pending to fire those that are due.
final class Deadlines: Sendable {
    static let shared = Deadlines()
    /// How late a deadline may fire: bounds here are seconds long.
    static let granularity = Duration.milliseconds(10)

    private struct Entry {
        let due: ContinuousClock.Instant
        let fire: @Sendable () -> Void
    }

    private struct State {
        var next = 0
        var entries: [Int: Entry] = [:]
        var ticking = false
    }

    private let state = Mutex(State())

    /// Calls `fire` once `limit` has passed, unless `cancel` came first. Returns the entry's id.
    func schedule(after limit: Duration, _ fire: @escaping @Sendable () -> Void) -> Int {
        let due = ContinuousClock.now + limit
        let (id, startTicking) = state.withLock { state in
            state.next &+= 1
            state.entries[state.next] = Entry(due: due, fire: fire)
            defer { state.ticking = true }
            return (state.next, !state.ticking)
        }
        if startTicking { Task.detached { await self.tick() } }
        return id
    }

    /// Removes the entry; true if it had not fired.
    @discardableResult
    func cancel(_ id: Int) -> Bool {
        state.withLock { $0.entries.removeValue(forKey: id) != nil }
    }

    /// Entries pending that fall due after `instant`.
    func pending(dueAfter instant: ContinuousClock.Instant) -> Int {
        state.withLock { $0.entries.values.count { $0.due > instant } }
    }

    private func tick() async {
        while true {
            try? await Task.sleep(for: Self.granularity)
            let now = ContinuousClock.now
            let due: [@Sendable () -> Void]? = state.withLock { state in
                guard !state.entries.isEmpty else {
                    state.ticking = false
                    return nil
                }
                // Most ticks find nothing due: look, and copy nothing, before removing.
                let due = state.entries.compactMap { id, entry in entry.due <= now ? id : nil }
                return due.compactMap { state.entries.removeValue(forKey: $0)?.fire }
            }
            guard let due else { return }
            for fire in due { fire() }
        }
    }
}
