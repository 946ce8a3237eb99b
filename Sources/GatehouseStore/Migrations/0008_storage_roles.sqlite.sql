-- STS credential vending: operators' roles (the upstream key pair sealed with the master key),
-- and the temporary credentials cached per role and session policy (sealed too).

CREATE TABLE storage_roles (
    app_id TEXT NOT NULL REFERENCES apps (app_id),
    role_id TEXT NOT NULL,
    provider TEXT NOT NULL CHECK (provider IN ('aws', 'alibaba')),
    sts_endpoint TEXT NOT NULL,
    region TEXT NOT NULL,
    role_arn TEXT NOT NULL,
    external_id TEXT,
    duration_seconds INTEGER NOT NULL CHECK (duration_seconds BETWEEN 900 AND 43200),
    max_duration_seconds INTEGER NOT NULL CHECK (max_duration_seconds BETWEEN 900 AND 43200),
    policy_template TEXT,
    storage_endpoint TEXT,
    addressing TEXT NOT NULL CHECK (addressing IN ('virtual', 'path')),
    attest_id TEXT NOT NULL,
    require_risk_decision INTEGER NOT NULL CHECK (require_risk_decision IN (0, 1)),
    self_signed INTEGER NOT NULL CHECK (self_signed IN (0, 1)),
    sealed_key BLOB NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('active', 'disabled')),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (app_id, role_id),
    CHECK (duration_seconds <= max_duration_seconds)
) STRICT;

CREATE TABLE sts_credentials (
    app_id TEXT NOT NULL,
    role_id TEXT NOT NULL,
    cache_key TEXT NOT NULL,
    sealed_credentials BLOB NOT NULL,
    expires_at INTEGER NOT NULL,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (app_id, role_id, cache_key),
    FOREIGN KEY (app_id, role_id) REFERENCES storage_roles (app_id, role_id) ON DELETE CASCADE
) STRICT;

CREATE INDEX sts_credentials_by_expiry ON sts_credentials (expires_at);
