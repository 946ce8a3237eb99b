import Foundation
import GatehouseCore

/// Signed-in console browsers, by the hash of their cookie, each with the admin token it acts as.
public protocol ConsoleSessionStore: Sendable {
    /// Stores a new session, and forgets the ones idle past the timeout (so the table holds only
    /// live sessions without a job of its own).
    func openConsoleSession(_ session: ConsoleSession, idleBefore cutoff: Date) async throws(StoreError)
    /// The session and its admin token, or nil.
    func consoleSession(withHash hash: [UInt8]) async throws(StoreError) -> (session: ConsoleSession, token: AdminToken)?
    func touchConsoleSession(withHash hash: [UInt8], at now: Date) async throws(StoreError)
    func closeConsoleSession(withHash hash: [UInt8]) async throws(StoreError)
}

/// The console's sign-in sessions, and its counters of what the service saw (held in memory between
/// flushes by the tally every counting store shares).
public final class SQLConsoleStore: CapabilityStore {
    let database: any SQLDatabase
    let changes: StoreChanges
    let activity: ActivityTally
    /// One activity flush at a time (`flushActivity`).
    let activityFlushes = AsyncGate()

    init(database: any SQLDatabase, changes: StoreChanges, activity: ActivityTally) {
        self.database = database
        self.changes = changes
        self.activity = activity
    }
}

extension SQLConsoleStore: ConsoleSessionStore {
    public func openConsoleSession(_ session: ConsoleSession, idleBefore cutoff: Date) async throws(StoreError) {
        do {
            try await database.transaction { transaction in
                try await transaction.query("DELETE FROM console_sessions WHERE last_seen_at < \(.date(cutoff))")
                try await transaction.query(
                    """
                    INSERT INTO console_sessions (session_hash, token_id, created_at, last_seen_at) VALUES (\(.bytes(session.hash)),
                      \(.uuid(session.tokenID)), \(.date(session.createdAt)), \(.date(session.lastSeenAt)))
                    """
                )
            }
        } catch let error as StoreError {
            throw error
        } catch {
            throw .unavailable(String(describing: type(of: error)))
        }
    }

    public func consoleSession(withHash hash: [UInt8]) async throws(StoreError) -> (session: ConsoleSession, token: AdminToken)? {
        let rows = try await database.query(
            """
            SELECT s.session_hash, s.created_at AS session_created_at, s.last_seen_at, t.*
            FROM console_sessions s JOIN admin_tokens t ON t.token_id = s.token_id WHERE s.session_hash = \(.bytes(hash))
            """
        )
        guard let row = rows.first else { return nil }
        let token = try SQLAdminStore.adminToken(row)
        let session = ConsoleSession(
            hash: try row.bytes("session_hash"),
            tokenID: token.id,
            createdAt: try row.date("session_created_at"),
            lastSeenAt: try row.date("last_seen_at")
        )
        return (session, token)
    }

    public func touchConsoleSession(withHash hash: [UInt8], at now: Date) async throws(StoreError) {
        try await database.query("UPDATE console_sessions SET last_seen_at = \(.date(now)) WHERE session_hash = \(.bytes(hash))")
    }

    public func closeConsoleSession(withHash hash: [UInt8]) async throws(StoreError) {
        try await database.query("DELETE FROM console_sessions WHERE session_hash = \(.bytes(hash))")
    }
}
