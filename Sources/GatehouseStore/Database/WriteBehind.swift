import Synchronization

/// Writes behind the answer: rows nobody needs before the caller has its answer (the decision of a
/// refused ztoken, which consumed nothing) are queued here and written in batches by one writer, so
/// that the answer waits for no database. What a crash can lose is exactly what is queued: at most
/// `capacity` rows, each written within about one round trip while the database keeps up. A row that
/// finds the queue full, or whose batch the database refused, is dropped and counted (`lost`): the
/// loss is never silent, `/metrics` shows it. `caughtUp()` waits for the rows queued before it, so a
/// read on this instance sees them (read-your-writes where the write was made). A row with a merge
/// key joins the queued row of the same key instead of queueing another (counts that add up): a
/// flood of them holds one queued row per key, and never fills the queue.
final class WriteBehind<Item: BehindRow>: Sendable {
    typealias Write = @Sendable ([Item]) async throws -> Void

    private struct State {
        var queued: [Item] = []
        /// Where each queued row with a merge key is in `queued`.
        var merging: [Item.MergeKey: Int] = [:]
        var writing = false
        /// Rows ever queued, and rows whose batch has ended (written or lost): FIFO, so a row's
        /// ticket is done once `ended` reaches it.
        var queuedTotal = 0
        var ended = 0
        var waiters: [(ticket: Int, continuation: CheckedContinuation<Void, Never>)] = []
        /// When the last batch began, across writers (one starts each time the queue fills again).
        var lastBatchStart: ContinuousClock.Instant?
    }

    /// The least time from one batch's start to the next's while the queue holds less than a full
    /// batch. Under a flood of merged rows (a forged-token flood's counts) the writer otherwise wrote
    /// the same row again as soon as the last write returned, thousands of statements a second for
    /// one row; paced, the row takes the flood's counts for a twentieth of a second at a time. A
    /// backlog (a full batch) goes at once, and so does the next batch when a reader already waits
    /// in `caughtUp` (one that begins waiting during a pause waits out the rest of it).
    static var pace: Duration { .milliseconds(50) }

    let capacity: Int
    private let maximumBatch: Int
    private let write: Write
    private let state = Mutex(State())
    private let writtenCount = Atomic<Int>(0)
    private let lostCount = Atomic<Int>(0)

    init(capacity: Int, maximumBatch: Int, write: @escaping Write) {
        self.capacity = capacity
        self.maximumBatch = maximumBatch
        self.write = write
    }

    var written: Int { writtenCount.load(ordering: .relaxed) }
    var lost: Int { lostCount.load(ordering: .relaxed) }
    var pending: Int { state.withLock { $0.queued.count } }

    /// Queues `item` (or merges it into the queued row of its key) and returns at once; starts the
    /// writer if it is idle.
    func enqueue(_ item: Item) {
        let startWriter: Bool? = state.withLock { state in
            if let key = item.mergeKey, let index = state.merging[key] {
                state.queued[index].merge(item)
                return false
            }
            guard state.queued.count < capacity else { return nil }
            if let key = item.mergeKey { state.merging[key] = state.queued.count }
            state.queued.append(item)
            state.queuedTotal += 1
            guard !state.writing else { return false }
            state.writing = true
            return true
        }
        switch startWriter {
        case nil: lostCount.wrappingAdd(item.weight, ordering: .relaxed)
        case true?: Task { await self.writeAll() }
        case false?: break
        }
    }

    /// Returns once every row queued before the call has been written (or lost).
    func caughtUp() async {
        await withCheckedContinuation { continuation in
            let done: Bool = state.withLock { state in
                guard state.ended < state.queuedTotal else { return true }
                state.waiters.append((state.queuedTotal, continuation))
                return false
            }
            if done { continuation.resume() }
        }
    }

    private func writeAll() async {
        while true {
            let due = state.withLock { state in
                state.queued.count < maximumBatch && state.waiters.isEmpty ? state.lastBatchStart.map { $0 + Self.pace } : nil
            }
            if let due, due > .now { try? await Task.sleep(until: due, clock: .continuous) }
            let batch: [Item] = state.withLock { state in
                state.lastBatchStart = .now
                let batch = Array(state.queued.prefix(maximumBatch))
                state.queued.removeFirst(batch.count)
                if !state.merging.isEmpty {
                    state.merging = state.merging.compactMapValues { $0 >= batch.count ? $0 - batch.count : nil }
                }
                if batch.isEmpty { state.writing = false }
                return batch
            }
            guard !batch.isEmpty else { return }
            do {
                try await write(batch)
                writtenCount.wrappingAdd(batch.reduce(0) { $0 + $1.weight }, ordering: .relaxed)
            } catch {
                lostCount.wrappingAdd(batch.reduce(0) { $0 + $1.weight }, ordering: .relaxed)
            }
            let released: [CheckedContinuation<Void, Never>] = state.withLock { state in
                state.ended += batch.count
                let ended = state.ended
                let released = state.waiters.filter { $0.ticket <= ended }.map(\.continuation)
                state.waiters.removeAll { $0.ticket <= ended }
                return released
            }
            for continuation in released { continuation.resume() }
        }
    }
}

/// A row written behind its answer.
protocol BehindRow: Sendable {
    associatedtype MergeKey: Hashable & Sendable
    /// Rows of the same key that wait in the queue together become one (`merge`); nil for a row that
    /// stands alone.
    var mergeKey: MergeKey? { get }
    /// How many of what the queue counts (decisions) the row stands for.
    var weight: Int { get }
    mutating func merge(_ other: Self)
}
