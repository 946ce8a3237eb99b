-- Hardware attestation: the device keys Apple App Attest or Android's keystore vouched for. A later
-- assertion moves `counter` forward in one conditional UPDATE, so two instances given the same
-- assertion at once accept it once.

CREATE TABLE attested_keys (
    app_id uuid NOT NULL REFERENCES apps (app_id),
    key_id text NOT NULL,
    platform text NOT NULL CHECK (platform IN ('app_attest', 'android_key')),
    attest_id text NOT NULL,
    device_id text,
    public_key bytea NOT NULL,
    counter bigint NOT NULL CHECK (counter BETWEEN 0 AND 4294967295),
    facts text NOT NULL,
    receipt bytea,
    attested_at timestamptz NOT NULL,
    last_used_at timestamptz NOT NULL,
    PRIMARY KEY (app_id, key_id)
);

CREATE INDEX attested_keys_by_device ON attested_keys (app_id, device_id);
