import Synchronization

/// Waits for `body` at most `limit`, then throws `timeout` (by default the database's
/// `StoreError.unavailable`) and cancels it. The caller is answered on time even when `body` ignores
/// cancellation (a query on a connection whose server vanished without closing it, a lease from a
/// pool that cannot connect, a client that stops sending its body): `body` runs in a task of its own,
/// which is left to finish or fail on its own after the caller has gone.
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

    /// The same bound for work that stops when cancelled, run structured: when this returns, `body` has
    /// ended. Reading a request body needs it: Hummingbird reads what is left of a body once its
    /// handler has returned, and a second reader of the same stream still waiting in the left-behind
    /// task of `run` crashes the process (two concurrent `next()` on one NIO sequence). NIO's body
    /// stream ends at once when its reader is cancelled, so waiting for it costs nothing.
    public static func runToEnd<T: Sendable>(
        within limit: Duration,
        otherwise timeout: any Error & Sendable,
        _ body: @escaping @Sendable () async throws -> T
    ) async throws -> T {
        let answer: T? = try await withThrowingTaskGroup(of: T?.self) { group in
            group.addTask { try await body() }
            // The bound: a child that ends at the deadline, or at once when the group is cancelled
            // (the body ended first), with no sleep left behind (`Deadlines`).
            group.addTask {
                let alarm = Alarm()
                await withTaskCancellationHandler {
                    await withCheckedContinuation { continuation in alarm.arm(continuation, after: limit) }
                } onCancel: {
                    alarm.ring()
                }
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
        // A cancelled reader may hand back what it had so far as if it were all.
        try Task.checkCancellation()
        guard let answer else { throw timeout }
        return answer
    }

    /// A wait that ends at its deadline or when rung, whichever is first (once).
    final class Alarm: Sendable {
        enum State {
            case idle
            case armed(CheckedContinuation<Void, Never>, deadline: Int)
            case rung
        }
        let state = Mutex(State.idle)

        func arm(_ continuation: CheckedContinuation<Void, Never>, after limit: Duration) {
            let deadline = Deadlines.shared.schedule(after: limit) { self.ring() }
            let ringing: Bool = state.withLock { state in
                guard case .idle = state else { return true }
                state = .armed(continuation, deadline: deadline)
                return false
            }
            if ringing {
                Deadlines.shared.cancel(deadline)
                continuation.resume()
            }
        }

        func ring() {
            let armed: (CheckedContinuation<Void, Never>, Int)? = state.withLock { state in
                defer { state = .rung }
                if case .armed(let continuation, let deadline) = state { return (continuation, deadline) }
                return nil
            }
            if let (continuation, deadline) = armed {
                Deadlines.shared.cancel(deadline)
                continuation.resume()
            }
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
