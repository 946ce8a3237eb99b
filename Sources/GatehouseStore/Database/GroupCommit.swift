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
final class GroupCommit<Item: Sendable, Outcome: Sendable>: Sendable {
    typealias Write = @Sendable ([Item]) async throws -> [Outcome]

    private struct Waiter {
        let item: Item
        let answer: BoundedWait.Once<Outcome>
    }

    private struct Queue {
        var waiting: [Waiter] = []
        var writers = 0
    }

    private let queue = Mutex(Queue())
    private let maximumWriters: Int
    private let maximumBatch: Int
    private let maximumWait: Duration
    private let write: Write

    /// - Parameters:
    ///   - maximumWriters: statements in flight at once (each holds one pooled connection).
    ///   - maximumBatch: items in one statement (bounded by the databases' parameter limits).
    ///   - write: writes a batch in one statement and returns one outcome per item, in order.
    init(maximumWriters: Int, maximumBatch: Int, maximumWait: Duration, write: @escaping Write) {
        self.maximumWriters = maximumWriters
        self.maximumBatch = maximumBatch
        self.maximumWait = maximumWait
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
            guard queue.writers < maximumWriters else { return false }
            queue.writers += 1
            return true
        }
        if startsWriter { Task { await self.drain() } }
        return try await withCheckedThrowingContinuation { answer.wait(with: $0) }
    }

    private func drain() async {
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
            do {
                let outcomes = try await write(batch.map(\.item))
                guard outcomes.count == batch.count else {
                    throw StoreError.corruptRow("a batch write returned \(outcomes.count) outcomes for \(batch.count) items")
                }
                for (waiter, outcome) in zip(batch, outcomes) { waiter.answer.finish(.success(outcome)) }
            } catch {
                for waiter in batch { waiter.answer.finish(.failure(error)) }
            }
        }
    }
}
