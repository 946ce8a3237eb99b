-- The embedded twin of 0010_attested_keys.postgres.sql.

CREATE TABLE attested_keys (
    app_id TEXT NOT NULL REFERENCES apps (app_id),
    key_id TEXT NOT NULL,
    platform TEXT NOT NULL CHECK (platform IN ('app_attest', 'android_key')),
    attest_id TEXT NOT NULL,
    device_id TEXT,
    public_key BLOB NOT NULL,
    counter INTEGER NOT NULL CHECK (counter BETWEEN 0 AND 4294967295),
    facts TEXT NOT NULL,
    receipt BLOB,
    attested_at INTEGER NOT NULL,
    last_used_at INTEGER NOT NULL,
    PRIMARY KEY (app_id, key_id)
) STRICT;

CREATE INDEX attested_keys_by_device ON attested_keys (app_id, device_id);
