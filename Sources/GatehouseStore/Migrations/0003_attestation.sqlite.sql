-- The embedded twin of 0003_attestation.postgres.sql.

CREATE TABLE attesters (
    app_id TEXT NOT NULL REFERENCES apps (app_id),
    attest_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('pow')),
    pow_format TEXT NOT NULL CHECK (pow_format IN ('altcha-v1', 'altcha-v2')),
    max_number INTEGER NOT NULL,
    cost INTEGER NOT NULL,
    key_prefix TEXT NOT NULL,
    adaptive INTEGER NOT NULL CHECK (adaptive IN (0, 1)),
    challenge_ttl_seconds INTEGER NOT NULL CHECK (challenge_ttl_seconds BETWEEN 30 AND 3600),
    token_ttl_seconds INTEGER NOT NULL CHECK (token_ttl_seconds BETWEEN 60 AND 43200),
    token_header TEXT NOT NULL,
    max_uses INTEGER CHECK (max_uses BETWEEN 1 AND 100000),
    algorithm TEXT NOT NULL CHECK (algorithm IN ('ES256', 'HS256')),
    sealed_secret BLOB,
    bind_header TEXT,
    routes TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('active', 'disabled')),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (app_id, attest_id),
    CHECK ((algorithm = 'HS256') = (sealed_secret IS NOT NULL))
) STRICT;

CREATE TABLE signing_keys (
    kid TEXT PRIMARY KEY,
    sealed_key BLOB NOT NULL,
    created_at INTEGER NOT NULL,
    retired_at INTEGER
) STRICT;

-- At most one key signs at a time; two instances starting together cannot both create one.
CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys ((retired_at IS NULL)) WHERE retired_at IS NULL;

CREATE TABLE attest_solutions (
    app_id TEXT NOT NULL,
    replay_key TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (app_id, replay_key)
) STRICT;

CREATE INDEX attest_solutions_by_expiry ON attest_solutions (expires_at);

CREATE TABLE attest_token_uses (
    app_id TEXT NOT NULL,
    jti TEXT NOT NULL,
    uses INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (app_id, jti)
) STRICT;

CREATE INDEX attest_token_uses_by_expiry ON attest_token_uses (expires_at);

CREATE TABLE sdk_configs (
    app_id TEXT PRIMARY KEY REFERENCES apps (app_id),
    version INTEGER NOT NULL,
    protected_hosts TEXT NOT NULL,
    updated_at INTEGER NOT NULL
) STRICT;

-- Adaptive attesters count a device's recent decisions.
CREATE INDEX risk_decisions_by_device ON risk_decisions (app_id, device_id, decided_at);
