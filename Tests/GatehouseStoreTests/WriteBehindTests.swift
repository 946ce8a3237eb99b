import Synchronization
import Testing

@testable import GatehouseStore

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
}
