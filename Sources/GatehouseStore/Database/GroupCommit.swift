import Atomics
import Synchronization

/// Group commit: writes that arrive while earlier ones are in flight wait and go to the database
/// together, in one statement, when a writer frees up. A lone write goes at once (no timer), so
/// batching costs latency only under load, when it saves a round trip and a commit per row. Every
/// caller returns after the statement holding its item has committed, or throws what it threw: a
/// caller is never told "done" before its row is durable. A failing statement fails every caller in
/// its batch, so it serves only writes that cannot conflict (random keys) or settle conflicts in SQL
/// (`ON CONFLICT DO NOTHING`). A caller waits at most `maximumWait` in all (queue and statement) and
/// then gets `StoreError.unavailable`: its item may still be written later, which every item here
/// tolerates (a nonce or ztoken nobody holds, a decision nobody was told of).
///
/// The queue is a lock and each caller's wait one answer (`BoundedWait.Once`) that the writer or the
/// deadline fills, whichever comes first: no task and no actor hop per write. (A risk query's write
/// had been a task of its own, to bound its wait, and two hops onto an actor; with the batch's own
/// switches that was the largest share of the server's CPU per query after the socket's.)
///
/// The writer bounds its batch itself (`batchLimit`), rather than through `BoundedWait`'s task per
/// statement: a batch that outlives it fails its callers and gives its writer's place up, so a write
/// stuck on a dead connection never stops the next batch; the stuck write's task is cancelled and left
/// to end on its own (as `BoundedWait` leaves its work), and its outcome is ignored. Writers run at
/// the requests' own priority: on Linux a higher one is a queue with threads of its own, which each
/// batch woke, and the server made a fifth more context switches at half the peak rate for no
/// measured gain (docs/PERFORMANCE.md, issue 34's fifteenth step).
///
/// A first writer starts as soon as an item waits; another only once `anotherWriterAt` items wait
/// for those writing. A batch costs the server and PostgreSQL its round trips and its statements'
/// start whatever its size, so at half the peak rate two writers each taking one or two queries cost
/// a risk query about a fifth more CPU than one writer taking what queued behind its batch, on a
/// machine whose CPU those waits share; at the peak the queue is long and every writer starts
/// (docs/PERFORMANCE.md, issue 34's fourteenth step).
///
/// A writer holds what it writes with (`Hold`: on PostgreSQL a connection of the batch pool, with the
/// writer on its event loop) from its first batch until the queue is empty, for at most `holdLimit`,
/// rather than leasing it for each batch: a lease and release a batch were two hops between Swift's
/// pool and the connection's loop and an idle timer set and cancelled, on the path from one batch's
/// answers to the next batch's read (docs/PERFORMANCE.md, issue 34's nineteenth step). A batch whose
/// write throws ends the hold, so that the pool and the hosts see the failure as they did; the hold
/// may write it again (a retry on another host), and whatever still holds it unanswered when the hold
/// ends is answered with the error.
final class GroupCommit<Item: Sendable, Outcome: Sendable>: Sendable {
    typealias Write = @Sendable ([Item]) async throws -> [Outcome]
    /// Opens what a writer's batches are written with, runs `batches` with the write that uses it, and
    /// gives it back when `batches` returns or throws (rethrowing).
    typealias Hold = @Sendable (_ batches: @escaping @Sendable (_ write: Write) async throws -> Void) async throws -> Void

    private struct Waiter {
        let item: Item
        let answer: BoundedWait.Once<Outcome>
    }

    private struct Queue {
        var waiting: [Waiter] = []
        var writers = 0

        /// Whether the item just queued starts a writer.
        mutating func startsWriter(maximumWriters: Int, anotherWriterAt: Int) -> Bool {
            guard writers < maximumWriters, writers == 0 || waiting.count >= anotherWriterAt else { return false }
            writers += 1
            return true
        }
    }

    private let queue = Mutex(Queue())
    private let maximumWriters: Int
    private let anotherWriterAt: Int
    private let maximumBatch: Int
    private let maximumWait: Duration
    private let batchLimit: Duration?
    private let holdLimit: Duration
    private let hold: Hold

    /// - Parameters:
    ///   - maximumWriters: statements in flight at once (each holds one pooled connection).
    ///   - anotherWriterAt: items waiting for the writers in flight that start one more.
    ///   - maximumBatch: items in one statement (bounded by the databases' parameter limits).
    ///   - batchLimit: the longest one batch's write may take (its hold's opening included, for the
    ///     first) before its writer gives its place up; nil where `write` bounds itself.
    ///   - holdLimit: the longest a writer keeps one hold: it opens another at least this often, so
    ///     that its batches follow the hosts' choice (`PostgresHosts`, checked every second) as every
    ///     other statement does.
    ///   - hold: what the writes need held across a writer's batches; `write` writes a batch in one
    ///     statement with it and returns one outcome per item, in order.
    init(
        maximumWriters: Int,
        anotherWriterAt: Int = 1,
        maximumBatch: Int,
        maximumWait: Duration,
        batchLimit: Duration? = nil,
        holdLimit: Duration = .seconds(1),
        hold: @escaping Hold
    ) {
        self.maximumWriters = maximumWriters
        self.anotherWriterAt = anotherWriterAt
        self.maximumBatch = maximumBatch
        self.maximumWait = maximumWait
        self.batchLimit = batchLimit
        self.holdLimit = holdLimit
        self.hold = hold
    }

    /// Writes that need nothing held between batches.
    convenience init(
        maximumWriters: Int,
        anotherWriterAt: Int = 1,
        maximumBatch: Int,
        maximumWait: Duration,
        batchLimit: Duration? = nil,
        write: @escaping Write
    ) {
        self.init(
            maximumWriters: maximumWriters,
            anotherWriterAt: anotherWriterAt,
            maximumBatch: maximumBatch,
            maximumWait: maximumWait,
            batchLimit: batchLimit
        ) { batches in try await batches(write) }
    }

    /// Items queued and not yet taken by a writer.
    var pending: Int { queue.withLock { $0.waiting.count } }

    func submit(_ item: Item) async throws -> Outcome {
        let answer = BoundedWait.Once<Outcome>()
        let deadline = Deadlines.shared.schedule(after: maximumWait) {
            answer.finish(.failure(StoreError.unavailable("the database did not answer in time")))
        }
        defer { Deadlines.shared.cancel(deadline) }
        let startsWriter = queue.withLock { queue in
            queue.waiting.append(Waiter(item: item, answer: answer))
            return queue.startsWriter(maximumWriters: maximumWriters, anotherWriterAt: anotherWriterAt)
        }
        if startsWriter { startWriter() }
        return try await withCheckedThrowingContinuation { answer.wait(with: $0) }
    }

    private func startWriter() {
        let writer = Writer()
        writer.task.withLock { $0 = Task { await self.drain(writer) } }
    }

    /// A batch taken from the queue: answered once, by its write or by its bound, whichever is first.
    private final class Batch: Sendable {
        let waiters: [Waiter]
        private let settled = Atomic<Bool>(false)
        private let bound = Mutex<Int?>(nil)

        init(_ waiters: [Waiter]) { self.waiters = waiters }

        var items: [Item] { waiters.map(\.item) }

        /// Starts the bound that answers the batch `unavailable` if its write outlives `limit`.
        func bound(by limit: Duration?, _ expire: @escaping @Sendable () -> Void) {
            guard let limit else { return }
            let id = Deadlines.shared.schedule(after: limit) { [self] in
                guard settles() else { return }
                for waiter in waiters { waiter.answer.finish(.failure(StoreError.unavailable("the database did not answer in time"))) }
                expire()
            }
            bound.withLock { $0 = id }
        }

        /// True for the first to settle the batch: its write, or its bound.
        func settles() -> Bool {
            guard settled.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged else { return false }
            if let id = bound.withLock({ $0 }) { Deadlines.shared.cancel(id) }
            return true
        }

        func answer(_ result: Result<[Outcome], any Error>) {
            switch result {
            case .success(let outcomes) where outcomes.count == waiters.count:
                for (waiter, outcome) in zip(waiters, outcomes) { waiter.answer.finish(.success(outcome)) }
            case .success(let outcomes):
                let error = StoreError.corruptRow("a batch write returned \(outcomes.count) outcomes for \(waiters.count) items")
                for waiter in waiters { waiter.answer.finish(.failure(error)) }
            case .failure(let error):
                for waiter in waiters { waiter.answer.finish(.failure(error)) }
            }
        }
    }

    /// A writer: its task, for its bound to cancel (a write waiting for a connection from a pool that
    /// cannot connect gives up and ends, rather than one more task a bound waiting for ever), and the
    /// batch it has taken and not yet answered, which its next hold starts with.
    private final class Writer: Sendable {
        let task = Mutex<Task<Void, Never>?>(nil)
        let unanswered = Mutex<Batch?>(nil)
        /// Set when a bound answered this writer's batch: its place went to another writer.
        let gaveUp = Atomic<Bool>(false)
        /// Set when it found the queue empty and left.
        let left = Atomic<Bool>(false)

        func cancel() { task.withLock { $0?.cancel() } }
    }

    /// Takes the next batch, bounded, as the writer's unanswered one; or, the queue empty, the writer
    /// leaves, in the same lock that found it empty, so that an item queued after it looked starts a
    /// writer of its own. Returns whether it took one.
    private func take(for writer: Writer) -> Bool {
        let waiters: [Waiter] = queue.withLock { queue in
            let batch = Array(queue.waiting.prefix(maximumBatch))
            queue.waiting.removeFirst(batch.count)
            if batch.isEmpty { queue.writers -= 1 }
            return batch
        }
        guard !waiters.isEmpty else {
            writer.left.store(true, ordering: .relaxed)
            return false
        }
        let batch = Batch(waiters)
        batch.bound(by: batchLimit) { [self] in
            writer.gaveUp.store(true, ordering: .relaxed)
            writer.cancel()
            giveUpWriterPlace()
        }
        writer.unanswered.withLock { $0 = batch }
        return true
    }

    /// One hold after another, each starting with the writer's unanswered batch.
    private func drain(_ writer: Writer) async {
        guard take(for: writer) else { return }
        while !writer.gaveUp.load(ordering: .relaxed), writer.unanswered.withLock({ $0 }) != nil {
            do {
                try await hold { write in try await self.writeQueued(for: writer, with: write) }
            } catch {
                // The hold could not open, or a batch's write ended it: that batch gets the error.
                if let failed = writer.unanswered.withLock({ $0.take() }), failed.settles() { failed.answer(.failure(error)) }
                guard !writer.gaveUp.load(ordering: .relaxed), !writer.left.load(ordering: .relaxed), take(for: writer) else { return }
            }
        }
    }

    /// Writes the writer's unanswered batch, then each one queued behind it, with one hold's `write`,
    /// until the queue is empty (the writer leaves), a write throws (its batch left unanswered, for the
    /// hold to write again or the writer to answer), a bound answered a batch first (the writer gave
    /// its place up), or the hold has lasted `holdLimit` (the batch taken next starts another).
    private func writeQueued(for writer: Writer, with write: Write) async throws {
        let opened = ContinuousClock.now
        // A hold written again after its bound answered its batch (a retry on another host) has nothing to do.
        while !writer.gaveUp.load(ordering: .relaxed), let batch = writer.unanswered.withLock({ $0 }) {
            let outcomes = try await write(batch.items)
            guard batch.settles() else {
                writer.unanswered.withLock { $0 = nil }
                return
            }
            batch.answer(.success(outcomes))
            writer.unanswered.withLock { $0 = nil }
            guard take(for: writer), ContinuousClock.now - opened < holdLimit else { return }
        }
    }

    /// A writer whose batch outlived its bound leaves its (cancelled) task to the stuck write: another
    /// writer takes its place if items wait, or the place is freed.
    private func giveUpWriterPlace() {
        let replaces = queue.withLock { queue in
            if queue.waiting.isEmpty { queue.writers -= 1 }
            return !queue.waiting.isEmpty
        }
        if replaces { startWriter() }
    }
}
