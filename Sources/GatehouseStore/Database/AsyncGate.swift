/// A first-come first-served async mutex. SQLite has one connection, and a transaction's statements
/// must not interleave with another task's, so every use of it passes through this gate.
actor AsyncGate {
    private var held = false
    private var waiters: [CheckedContinuation<Void, Never>] = []

    func enter() async {
        if !held {
            held = true
            return
        }
        await withCheckedContinuation { waiters.append($0) }
    }

    func leave() {
        if waiters.isEmpty {
            held = false
        } else {
            waiters.removeFirst().resume()
        }
    }

    func withGate<T: Sendable>(_ body: @Sendable () async throws -> T) async throws -> T {
        await enter()
        do {
            let result = try await body()
            leave()
            return result
        } catch {
            leave()
            throw error
        }
    }
}
