-- The embedded twin of 0001_foundation.postgres.sql: UUIDs as text, timestamps as integer
-- milliseconds since 1970, the same keys and checks.

CREATE TABLE gatehouse_settings (
    name TEXT PRIMARY KEY,
    value BLOB NOT NULL
) STRICT;

CREATE TABLE apps (
    app_id TEXT PRIMARY KEY,
    app_key TEXT NOT NULL UNIQUE CHECK (length(app_key) = 5 AND app_key NOT GLOB '*[^a-z0-9]*'),
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    platforms TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('active', 'disabled')),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;

CREATE TABLE app_secrets (
    app_id TEXT NOT NULL REFERENCES apps (app_id),
    kind TEXT NOT NULL CHECK (kind IN ('sdk', 'server')),
    version INTEGER NOT NULL CHECK (version > 0),
    sealed BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    retires_at INTEGER,
    PRIMARY KEY (app_id, kind, version)
) STRICT;

CREATE TABLE app_events (
    app_id TEXT NOT NULL REFERENCES apps (app_id),
    event_id INTEGER NOT NULL CHECK (event_id BETWEEN 3300 AND 3400),
    name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    created_at INTEGER NOT NULL,
    PRIMARY KEY (app_id, event_id)
) STRICT;

CREATE TABLE admin_tokens (
    token_id TEXT PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    token_hash BLOB NOT NULL UNIQUE,
    created_at INTEGER NOT NULL,
    revoked_at INTEGER
) STRICT;

CREATE TABLE audit_log (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    occurred_at INTEGER NOT NULL,
    actor TEXT NOT NULL,
    action TEXT NOT NULL,
    target_type TEXT NOT NULL,
    target_id TEXT NOT NULL,
    app_id TEXT,
    before_state TEXT,
    after_state TEXT,
    request_id TEXT,
    source_address TEXT
) STRICT;

CREATE INDEX audit_log_by_app ON audit_log (app_id, seq);

CREATE TRIGGER audit_log_no_update BEFORE UPDATE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;

CREATE TRIGGER audit_log_no_delete BEFORE DELETE ON audit_log BEGIN SELECT RAISE(ABORT, 'audit_log is append-only'); END;
