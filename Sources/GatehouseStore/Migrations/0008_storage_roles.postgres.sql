-- STS credential vending: operators' roles (the upstream key pair sealed with the master key),
-- and the temporary credentials cached per role and session policy (sealed too).

CREATE TABLE storage_roles (
    app_id uuid NOT NULL REFERENCES apps (app_id),
    role_id text NOT NULL,
    provider text NOT NULL CHECK (provider IN ('aws', 'alibaba')),
    sts_endpoint text NOT NULL,
    region text NOT NULL,
    role_arn text NOT NULL,
    external_id text,
    duration_seconds integer NOT NULL CHECK (duration_seconds BETWEEN 900 AND 43200),
    max_duration_seconds integer NOT NULL CHECK (max_duration_seconds BETWEEN 900 AND 43200),
    policy_template text,
    storage_endpoint text,
    addressing text NOT NULL CHECK (addressing IN ('virtual', 'path')),
    attest_id text NOT NULL,
    require_risk_decision integer NOT NULL CHECK (require_risk_decision IN (0, 1)),
    self_signed integer NOT NULL CHECK (self_signed IN (0, 1)),
    sealed_key bytea NOT NULL,
    status text NOT NULL CHECK (status IN ('active', 'disabled')),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (app_id, role_id),
    CHECK (duration_seconds <= max_duration_seconds)
);

CREATE TABLE sts_credentials (
    app_id uuid NOT NULL,
    role_id text NOT NULL,
    cache_key text NOT NULL,
    sealed_credentials bytea NOT NULL,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL,
    PRIMARY KEY (app_id, role_id, cache_key),
    FOREIGN KEY (app_id, role_id) REFERENCES storage_roles (app_id, role_id) ON DELETE CASCADE
);

CREATE INDEX sts_credentials_by_expiry ON sts_credentials (expires_at);
