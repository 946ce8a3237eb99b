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
final class GroupCommit<Item: Sendable, Outcome: Sendable>: Sendable {
    typealias Write = @Sendable ([Item]) async throws -> [Outcome]

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
    private let write: Write

    /// - Parameters:
    ///   - maximumWriters: statements in flight at once (each holds one pooled connection).
    ///   - anotherWriterAt: items waiting for the writers in flight that start one more.
    ///   - maximumBatch: items in one statement (bounded by the databases' parameter limits).
    ///   - batchLimit: the longest one batch's write may take before its writer gives its place up;
    ///     nil where `write` bounds itself.
    ///   - write: writes a batch in one statement and returns one outcome per item, in order.
    init(
        maximumWriters: Int,
        anotherWriterAt: Int = 1,
        maximumBatch: Int,
        maximumWait: Duration,
        batchLimit: Duration? = nil,
        write: @escaping Write
    ) {
        self.maximumWriters = maximumWriters
        self.anotherWriterAt = anotherWriterAt
        self.maximumBatch = maximumBatch
        self.maximumWait = maximumWait
        self.batchLimit = batchLimit
        self.write = write
    }

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

    /// A writer's task, for its bound to cancel: a write waiting for a connection from a pool that
    /// cannot connect gives up and ends, rather than one more task a bound waiting for ever.
    private final class Writer: Sendable {
        let task = Mutex<Task<Void, Never>?>(nil)

        func cancel() { task.withLock { $0?.cancel() } }
    }

    private func drain(_ writer: Writer) async {
        while true {
            // The writer leaves in the same lock that finds the queue empty: an item queued after it
            // looked starts a writer of its own.
            let batch: [Waiter] = queue.withLock { queue in
                let batch = Array(queue.waiting.prefix(maximumBatch))
                queue.waiting.removeFirst(batch.count)
                if batch.isEmpty { queue.writers -= 1 }
                return batch
            }
            guard !batch.isEmpty else { return }
            // Whichever settles the batch first, its write or its bound, answers its callers.
            let settled = ManagedAtomic(false)
            let settles: @Sendable () -> Bool = { settled.compareExchange(expected: false, desired: true, ordering: .relaxed).exchanged }
            let bound = batchLimit.map { limit in
                Deadlines.shared.schedule(after: limit) { [self] in
                    guard settles() else { return }
                    for waiter in batch { waiter.answer.finish(.failure(StoreError.unavailable("the database did not answer in time"))) }
                    writer.cancel()
                    giveUpWriterPlace()
                }
            }
            let result: Result<[Outcome], any Error>
            do { result = .success(try await write(batch.map(\.item))) } catch { result = .failure(error) }
            if let bound { Deadlines.shared.cancel(bound) }
            guard settles() else { return }
            switch result {
            case .success(let outcomes) where outcomes.count == batch.count:
                for (waiter, outcome) in zip(batch, outcomes) { waiter.answer.finish(.success(outcome)) }
            case .success(let outcomes):
                let error = StoreError.corruptRow("a batch write returned \(outcomes.count) outcomes for \(batch.count) items")
                for waiter in batch { waiter.answer.finish(.failure(error)) }
            case .failure(let error):
                for waiter in batch { waiter.answer.finish(.failure(error)) }
            }
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
