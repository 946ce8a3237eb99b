-- The embedded twin of 0002_device_risk.postgres.sql.

ALTER TABLE apps ADD COLUMN ztoken_ttl_seconds INTEGER NOT NULL DEFAULT 300 CHECK (ztoken_ttl_seconds BETWEEN 30 AND 3600);

ALTER TABLE apps ADD COLUMN retention_days INTEGER NOT NULL DEFAULT 30 CHECK (retention_days BETWEEN 1 AND 3650);

CREATE TABLE devices (
    app_id TEXT NOT NULL REFERENCES apps (app_id),
    device_id TEXT NOT NULL,
    client_device_id TEXT NOT NULL,
    collect_type INTEGER NOT NULL CHECK (collect_type BETWEEN 0 AND 7),
    platform TEXT,
    sdk_version TEXT,
    model TEXT,
    os_version TEXT,
    screen TEXT,
    idfv TEXT,
    idfa TEXT,
    wifi_ssid TEXT,
    wifi_bssid TEXT,
    environment INTEGER NOT NULL,
    first_seen INTEGER NOT NULL,
    last_seen INTEGER NOT NULL,
    last_address TEXT,
    PRIMARY KEY (app_id, device_id)
) STRICT;

CREATE TABLE sdk_nonces (
    app_id TEXT NOT NULL,
    nonce TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (app_id, nonce)
) STRICT;

CREATE INDEX sdk_nonces_by_expiry ON sdk_nonces (expires_at);

CREATE TABLE ztokens (
    app_id TEXT NOT NULL,
    token_id TEXT NOT NULL,
    device_id TEXT NOT NULL,
    event_id INTEGER NOT NULL CHECK (event_id BETWEEN 3300 AND 3400),
    account_id TEXT NOT NULL,
    issued_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    issued_from TEXT,
    page_url TEXT,
    consumed_at INTEGER,
    PRIMARY KEY (app_id, token_id)
) STRICT;

CREATE INDEX ztokens_by_device ON ztokens (app_id, device_id, issued_at);

CREATE INDEX ztokens_by_account ON ztokens (app_id, account_id, issued_at);

CREATE INDEX ztokens_by_address ON ztokens (app_id, issued_from, issued_at);

CREATE INDEX ztokens_by_age ON ztokens (app_id, issued_at);

CREATE TABLE risk_decisions (
    app_id TEXT NOT NULL,
    decision_id TEXT NOT NULL,
    decided_at INTEGER NOT NULL,
    event_id INTEGER NOT NULL,
    account_id TEXT NOT NULL,
    device_id TEXT,
    token_id TEXT,
    token_state TEXT NOT NULL,
    client_address TEXT,
    user_agent TEXT,
    page_url TEXT,
    score INTEGER NOT NULL CHECK (score BETWEEN 0 AND 100),
    decision TEXT NOT NULL CHECK (decision IN ('pass', 'review', 'reject')),
    tags TEXT NOT NULL,
    PRIMARY KEY (app_id, decision_id)
) STRICT;

CREATE INDEX risk_decisions_by_time ON risk_decisions (app_id, decided_at, decision_id);

CREATE TABLE risk_rules (
    app_id TEXT NOT NULL REFERENCES apps (app_id),
    scope INTEGER NOT NULL CHECK (scope = 0 OR scope BETWEEN 3300 AND 3400),
    rules TEXT NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (app_id, scope)
) STRICT;

CREATE TABLE risk_lists (
    app_id TEXT NOT NULL REFERENCES apps (app_id),
    entry_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('allow', 'deny')),
    subject TEXT NOT NULL CHECK (subject IN ('device', 'account', 'ip', 'cidr')),
    value TEXT NOT NULL,
    note TEXT,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (app_id, entry_id),
    UNIQUE (app_id, kind, subject, value)
) STRICT;
