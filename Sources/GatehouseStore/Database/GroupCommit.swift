/// Group commit: writes that arrive while earlier ones are in flight wait and go to the database
/// together, in one statement, when a writer frees up. A lone write goes at once (no timer), so
/// batching costs latency only under load, when it saves a round trip and a commit per row. Every
/// caller returns after the statement holding its item has committed, or throws what it threw: a
/// caller is never told "done" before its row is durable. A failing statement fails every caller in
/// its batch, so it serves only writes that cannot conflict (random keys) or settle conflicts in SQL
/// (`ON CONFLICT DO NOTHING`). A caller waits at most `maximumWait` in all (queue and statement) and
/// then gets `StoreError.unavailable`: its item may still be written later, which every item here
/// tolerates (a nonce or ztoken nobody holds, a decision nobody was told of).
actor GroupCommit<Item: Sendable, Outcome: Sendable> {
    typealias Write = @Sendable ([Item]) async throws -> [Outcome]

    private var waiting: [(item: Item, continuation: CheckedContinuation<Outcome, any Error>)] = []
    private var writers = 0
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

    nonisolated func submit(_ item: Item) async throws -> Outcome {
        try await BoundedWait.run(within: maximumWait) { try await self.enqueue(item) }
    }

    private func enqueue(_ item: Item) async throws -> Outcome {
        try await withCheckedThrowingContinuation { continuation in
            waiting.append((item, continuation))
            if writers < maximumWriters {
                writers += 1
                Task { await self.drain() }
            }
        }
    }

    private func drain() async {
        while !waiting.isEmpty {
            let batch = Array(waiting.prefix(maximumBatch))
            waiting.removeFirst(batch.count)
            do {
                let outcomes = try await write(batch.map(\.item))
                guard outcomes.count == batch.count else {
                    throw StoreError.corruptRow("a batch write returned \(outcomes.count) outcomes for \(batch.count) items")
                }
                for (waiter, outcome) in zip(batch, outcomes) { waiter.continuation.resume(returning: outcome) }
            } catch {
                for waiter in batch { waiter.continuation.resume(throwing: error) }
            }
        }
        writers -= 1
    }
}
