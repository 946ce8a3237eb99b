-- Client attestation: attesters (per app), the service's ES256 signing keys, single-use PoW
-- solutions, use counts of limited-use tokens, and the SDK's dynamic configuration.

CREATE TABLE attesters (
    app_id uuid NOT NULL REFERENCES apps (app_id),
    attest_id text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('pow')),
    pow_format text NOT NULL CHECK (pow_format IN ('altcha-v1', 'altcha-v2')),
    max_number bigint NOT NULL,
    cost integer NOT NULL,
    key_prefix text NOT NULL,
    adaptive integer NOT NULL CHECK (adaptive IN (0, 1)),
    challenge_ttl_seconds integer NOT NULL CHECK (challenge_ttl_seconds BETWEEN 30 AND 3600),
    token_ttl_seconds integer NOT NULL CHECK (token_ttl_seconds BETWEEN 60 AND 43200),
    token_header text NOT NULL,
    max_uses integer CHECK (max_uses BETWEEN 1 AND 100000),
    algorithm text NOT NULL CHECK (algorithm IN ('ES256', 'HS256')),
    sealed_secret bytea,
    bind_header text,
    routes text NOT NULL,
    status text NOT NULL CHECK (status IN ('active', 'disabled')),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (app_id, attest_id),
    CHECK ((algorithm = 'HS256') = (sealed_secret IS NOT NULL))
);

CREATE TABLE signing_keys (
    kid text PRIMARY KEY,
    sealed_key bytea NOT NULL,
    created_at timestamptz NOT NULL,
    retired_at timestamptz
);

-- At most one key signs at a time; two instances starting together cannot both create one.
CREATE UNIQUE INDEX signing_keys_one_active ON signing_keys ((retired_at IS NULL)) WHERE retired_at IS NULL;

CREATE TABLE attest_solutions (
    app_id uuid NOT NULL,
    replay_key text NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (app_id, replay_key)
);

CREATE INDEX attest_solutions_by_expiry ON attest_solutions (expires_at);

CREATE TABLE attest_token_uses (
    app_id uuid NOT NULL,
    jti text NOT NULL,
    uses integer NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (app_id, jti)
);

CREATE INDEX attest_token_uses_by_expiry ON attest_token_uses (expires_at);

CREATE TABLE sdk_configs (
    app_id uuid PRIMARY KEY REFERENCES apps (app_id),
    version bigint NOT NULL,
    protected_hosts text NOT NULL,
    updated_at timestamptz NOT NULL
);

-- Adaptive attesters count a device's recent decisions.
CREATE INDEX risk_decisions_by_device ON risk_decisions (app_id, device_id, decided_at);
