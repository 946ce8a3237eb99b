import Synchronization

/// Waits for `body` at most `limit`, then throws `timeout` (by default the database's
/// `StoreError.unavailable`) and cancels it. The caller is answered on time even when `body` ignores
/// cancellation (a query on a connection whose server vanished without closing it, a lease from a
/// pool that cannot connect): `body` runs in a task of its own, which is left to finish or fail on its
/// own after the caller has gone.
public enum BoundedWait {
    public static func run<T: Sendable>(
        within limit: Duration,
        otherwise timeout: any Error & Sendable = StoreError.unavailable("the database did not answer in time"),
        _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let once = Once<T>()
        let refusal = timeout
        let work = Task {
            do { once.finish(.success(try await body())) } catch { once.finish(.failure(error)) }
        }
        let timer = Deadlines.shared.schedule(after: limit) {
            if once.finish(.failure(refusal)) { work.cancel() }
        }
        defer { Deadlines.shared.cancel(timer) }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { once.wait(with: $0) }
        } onCancel: {
            work.cancel()
        }
    }

    /// The one answer of a race: whichever of the work and the timer finishes first.
    final class Once<T: Sendable>: Sendable {
        enum State {
            case empty
            case waiting(CheckedContinuation<T, any Error>)
            case finished(Result<T, any Error>)
            case answered
        }
        let state = Mutex(State.empty)

        /// True when this result is the answer (it came first).
        @discardableResult
        func finish(_ result: Result<T, any Error>) -> Bool {
            let (first, waiting): (Bool, CheckedContinuation<T, any Error>?) = state.withLock { state in
                switch state {
                case .empty:
                    state = .finished(result)
                    return (true, nil)
                case .waiting(let continuation):
                    state = .answered
                    return (true, continuation)
                case .finished, .answered:
                    return (false, nil)
                }
            }
            waiting?.resume(with: result)
            return first
        }

        func wait(with continuation: CheckedContinuation<T, any Error>) {
            let ready: Result<T, any Error>? = state.withLock { state in
                if case .finished(let result) = state {
                    state = .answered
                    return result
                }
                state = .waiting(continuation)
                return nil
            }
            if let ready { continuation.resume(with: ready) }
        }
    }
}
