import Synchronization
import Testing

@testable import GatehouseStore

/// Group commit without a task per write: each caller gets its own item's outcome, from batches of
/// what queued while a write was in flight; a write that hangs answers its callers `unavailable` at
/// the bound; a batch that outlives the writer's own bound gives the writer's place up to the next
/// batch; a failed write fails its batch only; no item is stranded by a writer leaving; and a writer's
/// batches share one hold (a connection) until the queue empties, a write fails or the hold's limit.
@Suite struct GroupCommitTests {
    struct Refused: Error {}

    /// The sum of the outcomes of `items`, submitted at once.
    static func total(of items: Range<Int>, submittedTo commit: GroupCommit<Int, Int>) async throws -> Int {
        try await withThrowingTaskGroup(of: Int.self) { group in
            for item in items { group.addTask { try await commit.submit(item) } }
            return try await group.reduce(0, +)
        }
    }

    @Test func everyCallerGetsItsOwnOutcomeAndWritesAreBatched() async throws {
        let batches = Mutex<[Int]>([])
        let commit = GroupCommit<Int, Int>(maximumWriters: 1, maximumBatch: 64, maximumWait: .seconds(30)) { items in
            batches.withLock { $0.append(items.count) }
            try await Task.sleep(for: .milliseconds(5))
            return items.map { $0 * 2 }
        }
        let outcomes = try await withThrowingTaskGroup(of: (Int, Int).self) { group in
            for number in 0..<500 { group.addTask { (number, try await commit.submit(number)) } }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        #expect(outcomes.count == 500)
        #expect(outcomes.allSatisfy { $0.value == $0.key * 2 })
        let sizes = batches.withLock { $0 }
        #expect(sizes.reduce(0, +) == 500)
        #expect(sizes.count < 500, "writes that queued behind one in flight went together (\(sizes.count) batches)")
        #expect(sizes.allSatisfy { $0 <= 64 })
    }

    @Test func aHangingWriteAnswersItsCallersUnavailableAtTheBound() async throws {
        let commit = GroupCommit<Int, Int>(maximumWriters: 1, maximumBatch: 8, maximumWait: .milliseconds(200)) { _ in
            try? await Task.sleep(for: .seconds(3_600))
            return []
        }
        let started = ContinuousClock.now
        await #expect(throws: StoreError.self) { try await commit.submit(1) }
        // Only that it was answered long before the write would have: the bound is 200 ms.
        #expect(ContinuousClock.now - started < .seconds(60))
    }

    /// The writer's own bound (`batchLimit`, which the store sets to the statement timeout): a caller
    /// queued behind a stuck batch is written only if that bound frees the one writer's place (else
    /// it gets `unavailable` at its own 20 s wait); the stuck write's late outcome is then ignored.
    /// The bound is 5 s: every batch has it, and under the whole suite's load a batch of a 2 ms write
    /// once took longer than 200 ms, and once (the suite's first seconds, 98 suites starting on two
    /// cores) longer than 2 s.
    @Test func aStuckBatchGivesItsWriterPlaceUpAtItsBound() async throws {
        let stuck = Atomic<Bool>(true)
        let holding = Atomic<Bool>(false)
        let inFlight = Atomic<Int>(0)
        let mostInFlight = Atomic<Int>(0)
        let released = AsyncStream<Void>.makeStream()
        let commit = GroupCommit<Int, Int>(maximumWriters: 1, maximumBatch: 8, maximumWait: .seconds(20), batchLimit: .seconds(5)) {
            items in
            if items == [1], stuck.load(ordering: .sequentiallyConsistent) {
                holding.store(true, ordering: .sequentiallyConsistent)
                for await _ in released.stream { break }
                return [-1]
            }
            let now = inFlight.add(1, ordering: .sequentiallyConsistent).newValue
            mostInFlight.max(now, ordering: .sequentiallyConsistent)
            defer { inFlight.subtract(1, ordering: .sequentiallyConsistent) }
            try await Task.sleep(for: .milliseconds(2))
            return items.map { $0 * 10 }
        }
        let first = Task { try await commit.submit(1) }
        while !holding.load(ordering: .sequentiallyConsistent) { await Task.yield() }
        // Queued behind the stuck batch: only the writer's place given up at the bound lets it go.
        let second = Task { try await commit.submit(2) }
        await #expect(throws: StoreError.self) { try await first.value }
        #expect(try await second.value == 20, "the next batch went while the stuck one still held its write")
        stuck.store(false, ordering: .sequentiallyConsistent)
        released.continuation.yield()
        #expect(try await Self.total(of: 0..<100, submittedTo: commit) == 10 * (0..<100).reduce(0, +))
        #expect(mostInFlight.load(ordering: .sequentiallyConsistent) == 1, "one writer at a time once the stuck write ended")
    }

    /// The bound cancels the stuck batch's task, as `BoundedWait` cancels its work: a write waiting
    /// for a connection that cannot come ends, rather than one more waiting task per bound.
    @Test func aBatchPastItsBoundIsCancelled() async throws {
        let cancelled = Atomic<Bool>(false)
        let commit = GroupCommit<Int, Int>(maximumWriters: 1, maximumBatch: 8, maximumWait: .seconds(20), batchLimit: .milliseconds(200)) {
            items in
            do {
                try await Task.sleep(for: .seconds(3_600))
            } catch {
                cancelled.store(true, ordering: .sequentiallyConsistent)
            }
            return items
        }
        await #expect(throws: StoreError.self) { try await commit.submit(1) }
        for _ in 0..<2_000 where !cancelled.load(ordering: .sequentiallyConsistent) { try await Task.sleep(for: .milliseconds(10)) }
        let wasCancelled = cancelled.load(ordering: .sequentiallyConsistent)
        #expect(wasCancelled, "the stuck write was not cancelled")
    }

    /// A second writer starts only once `anotherWriterAt` items wait for the first: below that they
    /// wait for the writer in flight; at it, they go while the first batch is still held.
    @Test func anotherWriterStartsOnlyOnceEnoughWait() async throws {
        let released = AsyncStream<Void>.makeStream()
        let holding = Atomic<Bool>(false)
        let written = Mutex<[[Int]]>([])
        let commit = GroupCommit<Int, Int>(maximumWriters: 2, anotherWriterAt: 8, maximumBatch: 64, maximumWait: .seconds(20)) { items in
            if items == [0] {
                holding.store(true, ordering: .sequentiallyConsistent)
                for await _ in released.stream { break }
            }
            written.withLock { $0.append(items) }
            return items
        }
        let first = Task { try await commit.submit(0) }
        while !holding.load(ordering: .sequentiallyConsistent) { await Task.yield() }
        let seven = (1...7).map { number in Task { try await commit.submit(number) } }
        // No second writer for seven: nothing is written while the first batch is held.
        try await Task.sleep(for: .milliseconds(200))
        #expect(written.withLock { $0.isEmpty }, "seven waiting started a second writer")
        let eighth = Task { try await commit.submit(8) }
        var total = try await eighth.value
        for task in seven { total += try await task.value }
        #expect(total == (1...8).reduce(0, +), "eight waiting went while the first batch was held")
        #expect(written.withLock { $0 } == [Array(1...8)])
        released.continuation.yield()
        #expect(try await first.value == 0)
    }

    @Test func aFailedWriteFailsItsBatchAndTheNextWriteStillGoes() async throws {
        let calls = Atomic<Int>(0)
        let commit = GroupCommit<Int, Int>(maximumWriters: 1, maximumBatch: 8, maximumWait: .seconds(30)) { items in
            if calls.add(1, ordering: .sequentiallyConsistent).newValue == 1 { throw Refused() }
            return items
        }
        await #expect(throws: Refused.self) { try await commit.submit(1) }
        #expect(try await commit.submit(2) == 2)
    }

    @Test func noItemIsStrandedWhileWritersComeAndGo() async throws {
        // One writer, writes that return at once: the writer leaves and comes back thousands of times,
        // and an item queued as it leaves must start the next one.
        let commit = GroupCommit<Int, Int>(maximumWriters: 1, maximumBatch: 4, maximumWait: .seconds(30)) { $0 }
        for round in 0..<20 {
            let total = try await Self.total(of: round..<(200 + round), submittedTo: commit)
            #expect(total == (0..<200).reduce(0, +) + 200 * round)
        }
    }

    /// What one writer's holds saw: each hold's batches, in order.
    final class Holds: Sendable {
        let batches = Mutex<[[Int]]>([])

        func open() -> Int {
            batches.withLock { holds in
                holds.append([])
                return holds.count - 1
            }
        }

        func wrote(_ count: Int, in hold: Int) { batches.withLock { $0[hold].append(count) } }
        var seen: [[Int]] { batches.withLock { $0 } }

        /// A group commit of one writer whose writes each take `write` and double their items.
        func commit(maximumBatch: Int, holdLimit: Duration, write: Duration) -> GroupCommit<Int, Int> {
            GroupCommit(maximumWriters: 1, maximumBatch: maximumBatch, maximumWait: .seconds(30), holdLimit: holdLimit) { [self] batches in
                let hold = open()
                try await batches { items in
                    wrote(items.count, in: hold)
                    try await Task.sleep(for: write)
                    return items.map { $0 * 2 }
                }
            }
        }
    }

    /// The first write is held until every other item waits, so that the queue never empties before
    /// the last batch: one hold must then carry every batch (counted, not timed).
    @Test func aWritersBatchesShareOneHoldUntilTheQueueEmpties() async throws {
        let holds = Holds()
        let released = AsyncStream<Void>.makeStream()
        let commit = GroupCommit<Int, Int>(maximumWriters: 1, maximumBatch: 8, maximumWait: .seconds(60), holdLimit: .seconds(3_600)) {
            batches in
            let hold = holds.open()
            try await batches { items in
                if items == [0] { for await _ in released.stream { break } }
                holds.wrote(items.count, in: hold)
                return items.map { $0 * 2 }
            }
        }
        let first = Task { try await commit.submit(0) }
        while holds.seen.isEmpty { await Task.yield() }
        let rest = Task { try await Self.total(of: 1..<400, submittedTo: commit) }
        while commit.pending < 399 { await Task.yield() }
        released.continuation.yield()
        #expect(try await first.value + rest.value == 2 * (0..<400).reduce(0, +))
        let seen = holds.seen
        #expect(seen.count == 1, "\(seen.count) holds for \(seen.joined().count) batches")
        #expect(seen.first == [1] + Array(repeating: 8, count: 49) + [7], "the first batch, then the queue 8 at a time")
        // Once the queue is empty the writer leaves and gives its hold back: the next item opens another.
        #expect(try await commit.submit(1) == 2)
        #expect(holds.seen.count == 2)
    }

    @Test func aHoldIsGivenBackAtItsLimitWhileItemsStillWait() async throws {
        let holds = Holds()
        let commit = holds.commit(maximumBatch: 2, holdLimit: .milliseconds(20), write: .milliseconds(5))
        #expect(try await Self.total(of: 0..<200, submittedTo: commit) == 2 * (0..<200).reduce(0, +))
        let seen = holds.seen
        #expect(seen.joined().reduce(0, +) == 200)
        // 100 batches of at least 5 ms: over 500 ms, so at least a dozen holds of about 20 ms each.
        #expect(seen.count >= 10, "\(seen.count) holds")
        #expect(seen.allSatisfy { !$0.isEmpty })
    }

    @Test func aHoldThatCannotOpenFailsItsBatchAndTheNextItemOpensAnother() async throws {
        let opens = Atomic<Int>(0)
        let commit = GroupCommit<Int, Int>(maximumWriters: 1, maximumBatch: 8, maximumWait: .seconds(30)) { batches in
            if opens.add(1, ordering: .sequentiallyConsistent).newValue == 1 { throw Refused() }
            try await batches { $0 }
        }
        await #expect(throws: Refused.self) { try await commit.submit(1) }
        #expect(try await commit.submit(2) == 2)
        #expect(opens.load(ordering: .sequentiallyConsistent) == 2)
    }

    /// A write that throws ends its hold with the error (the pool and the hosts see it). A hold that
    /// writes again after it (PostgreSQL's retry on another host) answers the batch with the second
    /// write; one that does not leaves the batch to fail; either way the next item opens a new hold.
    @Test func aFailedWriteEndsItsHoldWhichMayWriteItAgain() async throws {
        let writes = Atomic<Int>(0)
        let opens = Atomic<Int>(0)
        let retries = Atomic<Bool>(true)
        let commit = GroupCommit<Int, Int>(maximumWriters: 1, maximumBatch: 8, maximumWait: .seconds(30)) { batches in
            opens.add(1, ordering: .sequentiallyConsistent)
            let write: GroupCommit<Int, Int>.Write = { items in
                if writes.add(1, ordering: .sequentiallyConsistent).newValue % 2 == 1 { throw Refused() }
                return items.map { $0 * 3 }
            }
            do {
                try await batches(write)
            } catch {
                guard retries.load(ordering: .sequentiallyConsistent) else { throw error }
                try await batches(write)
            }
        }
        #expect(try await commit.submit(1) == 3, "the hold's second write answered the batch")
        #expect(writes.load(ordering: .sequentiallyConsistent) == 2)
        retries.store(false, ordering: .sequentiallyConsistent)
        await #expect(throws: Refused.self) { try await commit.submit(2) }
        #expect(try await commit.submit(4) == 12)
        #expect(opens.load(ordering: .sequentiallyConsistent) == 3)
    }
}
