-- Device start, ztokens, risk decisions, rules and lists. The high-volume tables (sdk_nonces,
-- ztokens, risk_decisions) carry app_id first in their key for a later Citus distribution by app,
-- and an index on their time column, which the retention purger walks.

ALTER TABLE apps ADD COLUMN ztoken_ttl_seconds integer NOT NULL DEFAULT 300 CHECK (ztoken_ttl_seconds BETWEEN 30 AND 3600);

ALTER TABLE apps ADD COLUMN retention_days integer NOT NULL DEFAULT 30 CHECK (retention_days BETWEEN 1 AND 3650);

CREATE TABLE devices (
    app_id uuid NOT NULL REFERENCES apps (app_id),
    device_id text NOT NULL,
    client_device_id text NOT NULL,
    collect_type integer NOT NULL CHECK (collect_type BETWEEN 0 AND 7),
    platform text,
    sdk_version text,
    model text,
    os_version text,
    screen text,
    idfv text,
    idfa text,
    wifi_ssid text,
    wifi_bssid text,
    environment integer NOT NULL,
    first_seen timestamptz NOT NULL,
    last_seen timestamptz NOT NULL,
    last_address text,
    PRIMARY KEY (app_id, device_id)
);

CREATE TABLE sdk_nonces (
    app_id uuid NOT NULL,
    nonce text NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (app_id, nonce)
);

CREATE INDEX sdk_nonces_by_expiry ON sdk_nonces (expires_at);

CREATE TABLE ztokens (
    app_id uuid NOT NULL,
    token_id text NOT NULL,
    device_id text NOT NULL,
    event_id integer NOT NULL CHECK (event_id BETWEEN 3300 AND 3400),
    account_id text NOT NULL,
    issued_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    issued_from text,
    page_url text,
    consumed_at timestamptz,
    PRIMARY KEY (app_id, token_id)
);

CREATE INDEX ztokens_by_device ON ztokens (app_id, device_id, issued_at);

CREATE INDEX ztokens_by_account ON ztokens (app_id, account_id, issued_at);

CREATE INDEX ztokens_by_address ON ztokens (app_id, issued_from, issued_at);

CREATE INDEX ztokens_by_age ON ztokens (app_id, issued_at);

CREATE TABLE risk_decisions (
    app_id uuid NOT NULL,
    decision_id uuid NOT NULL,
    decided_at timestamptz NOT NULL,
    event_id integer NOT NULL,
    account_id text NOT NULL,
    device_id text,
    token_id text,
    token_state text NOT NULL,
    client_address text,
    user_agent text,
    page_url text,
    score integer NOT NULL CHECK (score BETWEEN 0 AND 100),
    decision text NOT NULL CHECK (decision IN ('pass', 'review', 'reject')),
    tags text NOT NULL,
    PRIMARY KEY (app_id, decision_id)
);

CREATE INDEX risk_decisions_by_time ON risk_decisions (app_id, decided_at, decision_id);

CREATE TABLE risk_rules (
    app_id uuid NOT NULL REFERENCES apps (app_id),
    scope integer NOT NULL CHECK (scope = 0 OR scope BETWEEN 3300 AND 3400),
    rules text NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (app_id, scope)
);

CREATE TABLE risk_lists (
    app_id uuid NOT NULL REFERENCES apps (app_id),
    entry_id uuid NOT NULL,
    kind text NOT NULL CHECK (kind IN ('allow', 'deny')),
    subject text NOT NULL CHECK (subject IN ('device', 'account', 'ip', 'cidr')),
    value text NOT NULL,
    note text,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (app_id, entry_id),
    UNIQUE (app_id, kind, subject, value)
);
