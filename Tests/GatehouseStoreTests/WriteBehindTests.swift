import Synchronization
import Testing

@testable import GatehouseStore

/// A row that stands alone, for the queue's order and bounds.
extension Int: BehindRow {
    public var mergeKey: Never? { nil }
    public var weight: Int { 1 }
    public mutating func merge(_ other: Int) {}
}

/// A count that merges with the queued count of its key.
struct Tally: BehindRow, Equatable {
    let key: String
    var count: Int
    var mergeKey: String? { key }
    var weight: Int { count }
    mutating func merge(_ other: Tally) { count += other.count }
}

/// Rows written behind their answers: in order, counted, bounded, and caught up on demand.
@Suite struct WriteBehindTests {
    struct Refused: Error {}

    /// What the writer was given, and a gate that holds it inside a write until opened.
    final class Sink: Sendable {
        let batches = Mutex<[[Int]]>([])
        let open = Atomic<Bool>(true)
        let inside = Atomic<Bool>(false)

        func write(_ batch: [Int]) async throws {
            inside.store(true, ordering: .sequentiallyConsistent)
            while !open.load(ordering: .sequentiallyConsistent) { try await Task.sleep(for: .milliseconds(5)) }
            if batch.contains(-1) { throw Refused() }
            batches.withLock { $0.append(batch) }
        }

        var rows: [Int] { batches.withLock { $0.flatMap { $0 } } }
    }

    @Test func rowsAreWrittenInOrderAndAReadCatchesUp() async {
        let sink = Sink()
        let behind = WriteBehind<Int>(capacity: 100, maximumBatch: 3) { try await sink.write($0) }
        for row in 1...10 { behind.enqueue(row) }
        await behind.caughtUp()
        #expect(sink.rows == Array(1...10))
        #expect(behind.written == 10 && behind.lost == 0 && behind.pending == 0)
        #expect(sink.batches.withLock { $0.allSatisfy { $0.count <= 3 } })
    }

    @Test func aFullQueueAndARefusedBatchLoseRowsAndCountThem() async throws {
        let sink = Sink()
        sink.open.store(false, ordering: .sequentiallyConsistent)
        let behind = WriteBehind<Int>(capacity: 4, maximumBatch: 1) { try await sink.write($0) }
        behind.enqueue(1)
        while !sink.inside.load(ordering: .sequentiallyConsistent) { try await Task.sleep(for: .milliseconds(5)) }
        // The writer holds row 1; four more fit in the queue, two do not.
        for row in 2...7 { behind.enqueue(row) }
        #expect(behind.pending == 4 && behind.lost == 2)
        behind.enqueue(-1)
        #expect(behind.lost == 3, "still full")
        sink.open.store(true, ordering: .sequentiallyConsistent)
        await behind.caughtUp()
        #expect(sink.rows == [1, 2, 3, 4, 5])
        behind.enqueue(-1)
        await behind.caughtUp()
        #expect(behind.written == 5 && behind.lost == 4 && behind.pending == 0)
    }

    @Test func countsOfOneKeyMergeWhileQueuedAndNeverFillTheQueue() async throws {
        let batches = Mutex<[[Tally]]>([])
        let open = Atomic<Bool>(false)
        let inside = Atomic<Bool>(false)
        let behind = WriteBehind<Tally>(capacity: 3, maximumBatch: 2) { batch in
            inside.store(true, ordering: .sequentiallyConsistent)
            while !open.load(ordering: .sequentiallyConsistent) { try await Task.sleep(for: .milliseconds(5)) }
            batches.withLock { $0.append(batch) }
        }
        behind.enqueue(Tally(key: "held", count: 1))
        while !inside.load(ordering: .sequentiallyConsistent) { try await Task.sleep(for: .milliseconds(5)) }
        // A flood of three keys while the writer is held: one queued row each, nothing lost.
        for number in 0..<3_000 { behind.enqueue(Tally(key: ["a", "b", "c"][number % 3], count: 1)) }
        #expect(behind.pending == 3 && behind.lost == 0)
        // The queue is full of rows; a fourth key does not fit, a known one still merges.
        behind.enqueue(Tally(key: "d", count: 7))
        behind.enqueue(Tally(key: "a", count: 1))
        #expect(behind.pending == 3 && behind.lost == 7)
        open.store(true, ordering: .sequentiallyConsistent)
        await behind.caughtUp()
        let written = batches.withLock { $0 }
        #expect(
            written.flatMap { $0 } == [
                Tally(key: "held", count: 1), Tally(key: "a", count: 1_001), Tally(key: "b", count: 1_000), Tally(key: "c", count: 1_000),
            ]
        )
        #expect(behind.written == 3_002 && behind.pending == 0)
        // Written rows leave the merge: the next count of a key is a row of its own.
        behind.enqueue(Tally(key: "a", count: 2))
        await behind.caughtUp()
        #expect(batches.withLock { $0.last } == [Tally(key: "a", count: 2)])
    }

    /// A flood of one key's counts is written a batch per pace, not a statement per write's round
    /// trip, and its counts add up to every row enqueued.
    @Test func aFloodOfMergedRowsIsWrittenAtThePace() async throws {
        let batches = Mutex<[[Tally]]>([])
        let behind = WriteBehind<Tally>(capacity: 10, maximumBatch: 4) { batch in batches.withLock { $0.append(batch) } }
        let start = ContinuousClock.now
        let enqueued = 2_000
        for _ in 0..<enqueued {
            behind.enqueue(Tally(key: "a", count: 1))
            await Task.yield()
        }
        await behind.caughtUp()
        let elapsed = ContinuousClock.now - start
        let written = batches.withLock { $0 }
        #expect(written.flatMap { $0 }.reduce(0) { $0 + $1.count } == enqueued)
        #expect(written.count <= Int(elapsed / WriteBehind<Tally>.pace) + 2, "\(written.count) batches in \(elapsed)")
    }
}
