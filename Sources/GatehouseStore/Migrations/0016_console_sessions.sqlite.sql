-- The embedded twin of 0016_console_sessions.postgres.sql.

CREATE TABLE console_sessions (
    session_hash BLOB PRIMARY KEY,
    token_id TEXT NOT NULL REFERENCES admin_tokens (token_id),
    created_at INTEGER NOT NULL,
    last_seen_at INTEGER NOT NULL
) STRICT;

CREATE INDEX console_sessions_by_last_seen ON console_sessions (last_seen_at);
