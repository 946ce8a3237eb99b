import Synchronization
import Testing

@testable import GatehouseStore

/// The bounded wait: `run` answers on time even when its work ignores cancellation (and leaves it
/// behind). (A request body's deadline is its connection's: `BodyDeadlineHandler`.)
@Suite struct BoundedWaitTests {
    struct TooSlow: Error, Equatable {}

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
            #expect(try await BoundedWait.run(within: bound) { number + 1 } == number + 1)
        }
        #expect(Deadlines.shared.pending(dueAfter: ContinuousClock.now + .seconds(86_400 * 6)) == 0)
    }
}
