-- The operator console's sessions (issue 23): a browser signed in with an admin token. Only the
-- cookie's SHA-256 is kept; a session ends with its token (the join finds the token revoked).

CREATE TABLE console_sessions (
    session_hash bytea PRIMARY KEY,
    token_id uuid NOT NULL REFERENCES admin_tokens (token_id),
    created_at timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL
);

CREATE INDEX console_sessions_by_last_seen ON console_sessions (last_seen_at);
