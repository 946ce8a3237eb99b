import Synchronization
import Testing

@testable import GatehouseStore

/// Group commit without a task per write: each caller gets its own item's outcome, from batches of
/// what queued while a write was in flight; a write that hangs answers its callers `unavailable` at
/// the bound; a failed write fails its batch only; and no item is stranded by a writer leaving.
@Suite struct GroupCommitTests {
    struct Refused: Error {}

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
            let total = try await withThrowingTaskGroup(of: Int.self) { group in
                for number in 0..<200 { group.addTask { try await commit.submit(number + round) } }
                return try await group.reduce(0, +)
            }
            #expect(total == (0..<200).reduce(0, +) + 200 * round)
        }
    }
}
