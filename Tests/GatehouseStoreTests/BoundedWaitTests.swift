import Synchronization
import Testing

@testable import GatehouseStore

/// The two bounded waits: `run` answers on time even when its work ignores cancellation (and leaves
/// it behind); `runToEnd` answers on time for work that stops when cancelled, and only once it has.
@Suite struct BoundedWaitTests {
    struct TooSlow: Error, Equatable {}

    @Test func runToEndAnswersTheWorkWhenItComesFirst() async throws {
        let value = try await BoundedWait.runToEnd(within: .seconds(5), otherwise: TooSlow()) { 42 }
        #expect(value == 42)
    }

    @Test func runToEndPassesOnTheWorksError() async throws {
        await #expect(throws: TooSlow.self) {
            try await BoundedWait.runToEnd(within: .seconds(5), otherwise: StoreError.unavailable("x")) { () async throws -> Int in
                throw TooSlow()
            }
        }
    }

    @Test func runToEndTimesOutAndTheWorkHasEndedWhenItAnswers() async throws {
        let ended = Atomic<Bool>(false)
        await #expect(throws: TooSlow.self) {
            try await BoundedWait.runToEnd(within: .milliseconds(100), otherwise: TooSlow()) { () async throws -> Int in
                defer { ended.store(true, ordering: .sequentiallyConsistent) }
                try await Task.sleep(for: .seconds(30))
                return 1
            }
        }
        let endedBeforeTheAnswer = ended.load(ordering: .sequentiallyConsistent)
        #expect(endedBeforeTheAnswer, "the work is over before the answer, not left behind")
    }

    @Test func runToEndRefusesWhatACancelledWorkHandsBack() async throws {
        // A cancelled body reader can return what it had so far; the caller must not take it for the whole.
        let waiting = Task {
            try await BoundedWait.runToEnd(within: .seconds(30), otherwise: TooSlow()) { () async -> Int in
                try? await Task.sleep(for: .seconds(30))
                return 7
            }
        }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
    }

    @Test func runAnswersOnTimeWhenTheWorkIgnoresCancellation() async throws {
        // Not cancellable: it runs until told, as a connection whose peer vanished waits. The answer
        // comes while it still runs (no wall-clock bound: the test process shares its threads).
        let release = Atomic<Bool>(false)
        let finished = Atomic<Bool>(false)
        await #expect(throws: TooSlow.self) {
            try await BoundedWait.run(within: .milliseconds(100), otherwise: TooSlow()) { () async -> Int in
                while !release.load(ordering: .sequentiallyConsistent) { try? await Task.sleep(for: .milliseconds(10)) }
                finished.store(true, ordering: .sequentiallyConsistent)
                return 1
            }
        }
        let finishedBeforeTheAnswer = finished.load(ordering: .sequentiallyConsistent)
        release.store(true, ordering: .sequentiallyConsistent)
        #expect(!finishedBeforeTheAnswer, "answered while the work still ran")
    }

    /// A wait that ended before its bound leaves nothing behind: no sleeping timer holds memory until
    /// the bound (which is what a cancelled `Task.sleep` did), and no entry stays in the table.
    @Test func boundsOfWaitsThatEndedEarlyLeaveNothingBehind() async throws {
        // A bound no other suite uses, so that their waits, pending at this moment, are not counted.
        let bound = Duration.seconds(86_400 * 7)
        for number in 0..<2_000 {
            let answer = try await BoundedWait.runToEnd(within: bound, otherwise: StoreError.unavailable("late")) { number }
            #expect(answer == number)
            #expect(try await BoundedWait.run(within: bound) { number + 1 } == number + 1)
        }
        #expect(Deadlines.shared.pending(dueAfter: ContinuousClock.now + .seconds(86_400 * 6)) == 0)
    }
}
