-- The embedded twin of 0023_play_integrity.postgres.sql. SQLite cannot change a CHECK in place: the
-- attesters table is rebuilt with the new kind and columns.

CREATE TABLE attesters_rebuilt (
    app_id TEXT NOT NULL REFERENCES apps (app_id),
    attest_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('pow', 'captcha', 'pow+captcha', 'appAttest', 'androidKeyAttestation', 'playIntegrity')),
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
    require_signature INTEGER NOT NULL DEFAULT 0 CHECK (require_signature IN (0, 1)),
    hardware_settings TEXT,
    require_hardware INTEGER NOT NULL DEFAULT 0 CHECK (require_hardware IN (0, 1)),
    enforcement TEXT NOT NULL DEFAULT 'enforce' CHECK (enforcement IN ('enforce', 'monitor')),
    sealed_credentials BLOB,
    accept_play_integrity TEXT,
    PRIMARY KEY (app_id, attest_id),
    CHECK ((algorithm = 'HS256') = (sealed_secret IS NOT NULL)),
    CHECK ((kind IN ('appAttest', 'androidKeyAttestation', 'playIntegrity')) = (hardware_settings IS NOT NULL)),
    CHECK ((kind = 'playIntegrity') = (sealed_credentials IS NOT NULL))
) STRICT;

INSERT INTO attesters_rebuilt (app_id, attest_id, kind, pow_format, max_number, cost, key_prefix, adaptive, challenge_ttl_seconds,
                               token_ttl_seconds, token_header, max_uses, algorithm, sealed_secret, bind_header, routes, status,
                               created_at, updated_at, require_signature, hardware_settings, require_hardware, enforcement)
SELECT app_id, attest_id, kind, pow_format, max_number, cost, key_prefix, adaptive, challenge_ttl_seconds, token_ttl_seconds,
       token_header, max_uses, algorithm, sealed_secret, bind_header, routes, status, created_at, updated_at, require_signature,
       hardware_settings, require_hardware, enforcement
FROM attesters;
DROP TABLE attesters;
ALTER TABLE attesters_rebuilt RENAME TO attesters;

ALTER TABLE devices ADD COLUMN integrity_facts TEXT;
ALTER TABLE devices ADD COLUMN integrity_at INTEGER;

ALTER TABLE storage_roles ADD COLUMN accept_play_integrity TEXT
    CHECK (accept_play_integrity IN ('virtual', 'basic', 'device', 'strong'));

CREATE TABLE attestation_edges (
    app_id TEXT NOT NULL,
    kind INTEGER NOT NULL CHECK (kind IN (1, 2)),
    subject TEXT NOT NULL,
    member TEXT NOT NULL,
    last_seen INTEGER NOT NULL,
    PRIMARY KEY (app_id, kind, subject, member)
) STRICT;

CREATE INDEX attestation_edges_recent ON attestation_edges (app_id, kind, subject, last_seen);
