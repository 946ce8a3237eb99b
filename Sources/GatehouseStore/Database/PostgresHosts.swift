import Logging
import PostgresNIO
import Synchronization

/// The PostgreSQL hosts of a multi-host URL, one connection pool each, and which of them takes this
/// instance's statements: with `target_session_attrs=read-write` (or `primary`) the one that accepts
/// writes, found by asking each host, and found again without a restart when a failover moves it.
/// A failover tool (pg_auto_failover, Patroni) promotes a standby; the instances follow on their own.
///
/// Found again when: a statement fails in a way that says the host is gone or no longer writable
/// (`suspect`), or the watch (every second, multi-host only) finds the chosen host unreachable or
/// read-only. Until a writable host is found, statements fail at once with `StoreError.unavailable`
/// (a 503 with `Retry-After` above), so nothing waits on a host known to be gone.
final class PostgresHosts: Sendable {
    let clients: [PostgresClient]
    /// Each host's pool for the group commits' batches (`SQLDatabase.forBatches`), beside its main one.
    let batchClients: [PostgresClient]
    /// Each host's connections for the probes (`isWritable`): a probe that waited for a lease on a
    /// main pool that requests keep busy would outlast its timeout and count a live host out, so that
    /// load on the instance would refuse every statement for a watch period at a time.
    let probeClients: [PostgresClient]
    let names: [String]
    let attributes: PostgresURL.SessionAttributes
    let logger: Logger
    /// The index of the host statements go to; nil while none is known.
    private let chosen: Mutex<Int?>
    private let search = Mutex<Task<Int?, Never>?>(nil)
    /// When the last search found no writable host: for a watch period after it, statements are
    /// refused without asking again (a host that is gone costs a search its whole probe timeout).
    private let foundNone = Mutex<ContinuousClock.Instant?>(nil)

    /// How long one host may take to say what it is.
    static let probeTimeout = Duration.seconds(2)
    static let watchPeriod = Duration.seconds(1)

    /// Connections of each host's batch pool: one per group-commit writer, half the nonces' and half
    /// the consumptions' (`SQLDeviceRiskStore.batchWriters`).
    static let batchConnections = 4

    init(
        clients: [PostgresClient],
        batchClients: [PostgresClient],
        probeClients: [PostgresClient],
        names: [String],
        attributes: PostgresURL.SessionAttributes,
        logger: Logger
    ) {
        precondition(batchClients.count == clients.count && probeClients.count == clients.count, "one batch pool and one probe per host")
        self.clients = clients
        self.batchClients = batchClients
        self.probeClients = probeClients
        self.names = names
        self.attributes = attributes
        self.logger = logger
        // One host, or any host will do: the first, as libpq with one host; nothing to find.
        chosen = Mutex(clients.count == 1 || attributes == .any ? 0 : nil)
    }

    var needsSearch: Bool { clients.count > 1 && attributes != .any }

    /// The host statements go to now; nil while none is known.
    var chosenIndex: Int? { chosen.withLock { $0 } }

    /// The pool statements go to now, searching the hosts if none is known.
    func current() async throws(StoreError) -> (index: Int, client: PostgresClient) {
        if let index = chosen.withLock({ $0 }) { return (index, clients[index]) }
        let unavailable = StoreError.unavailable("no writable database among \(names.joined(separator: ", "))")
        if let last = foundNone.withLock({ $0 }), ContinuousClock.now - last < Self.watchPeriod { throw unavailable }
        guard let index = await find() else { throw unavailable }
        return (index, clients[index])
    }

    /// A statement on host `index` failed in a way that says it is gone or read-only: the next
    /// statement searches again (unless another already moved on).
    func suspect(_ index: Int, because reason: String) {
        guard needsSearch else { return }
        let dropped = chosen.withLock { chosen -> Bool in
            guard chosen == index else { return false }
            chosen = nil
            return true
        }
        if dropped { logger.warning("database host no longer usable", metadata: ["host": .string(names[index]), "reason": .string(reason)]) }
    }

    /// One search at a time; callers that arrive during it share its answer.
    private func find() async -> Int? {
        let task = search.withLock { search -> Task<Int?, Never> in
            if let running = search { return running }
            let started = Task { await self.probeAll() }
            search = started
            return started
        }
        let found = await task.value
        search.withLock { search in if search == task { search = nil } }
        return found
    }

    /// Asks every host at once; the first writable one in URL order wins, as libpq's order would.
    private func probeAll() async -> Int? {
        let writable = await withTaskGroup(of: (Int, Bool).self) { group in
            for index in clients.indices { group.addTask { (index, await self.isWritable(index)) } }
            var writable = Set<Int>()
            for await (index, ok) in group where ok { writable.insert(index) }
            return writable
        }
        guard let index = clients.indices.first(where: writable.contains) else {
            foundNone.withLock { $0 = .now }
            return nil
        }
        chosen.withLock { $0 = index }
        logger.notice("database host chosen", metadata: ["host": .string(names[index])])
        return index
    }

    /// Whether a host answers in time and takes writes (libpq's read-write test: not in recovery, and
    /// sessions not read-only by default, as a node being promoted or demoted is).
    func isWritable(_ index: Int) async -> Bool {
        let client = probeClients[index]
        let logger = logger
        @Sendable func ask() async throws -> Bool {
            let rows = try await client.query(
                "SELECT pg_is_in_recovery() AS standby, current_setting('transaction_read_only') AS read_only",
                logger: logger
            )
            for try await (standby, readOnly) in rows.decode((Bool, String).self) { return !standby && readOnly == "off" }
            return false
        }
        // A pooled connection the server ended (a demotion, a restart) fails its next query once and
        // leaves the pool; asking again, on a fresh connection, keeps it from counting a live host out.
        let answer = try? await BoundedWait.run(within: Self.probeTimeout) { () async throws -> Bool in
            do { return try await ask() } catch { return try await ask() }
        }
        return answer ?? false
    }

    /// Checks the chosen host every second, so that a failover is noticed even while no statement
    /// fails (a standby promoted while the old primary still answers, read-only).
    func watch() async {
        guard needsSearch else { return }
        while !Task.isCancelled {
            try? await Task.sleep(for: Self.watchPeriod)
            if let index = chosen.withLock({ $0 }) {
                if !(await isWritable(index)) { suspect(index, because: "the watch found it unreachable or read-only") }
            } else {
                _ = await find()
            }
        }
    }
}
