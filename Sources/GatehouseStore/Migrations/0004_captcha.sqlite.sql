-- Slider captcha: challenges (the answer stays here), single-use pass tokens (stored hashed), and
-- the attester kinds that ask for a captcha.

CREATE TABLE captcha_challenges (
    app_id TEXT NOT NULL REFERENCES apps (app_id),
    challenge_id TEXT NOT NULL,
    language TEXT NOT NULL CHECK (language IN ('cn', 'en')),
    device_id TEXT,
    attest_id TEXT,
    action TEXT,
    cdata TEXT,
    hostname TEXT,
    client_address TEXT,
    answer_x INTEGER NOT NULL,
    answer_y INTEGER NOT NULL,
    attempts_left INTEGER NOT NULL CHECK (attempts_left >= 0),
    state TEXT NOT NULL CHECK (state IN ('open', 'passed', 'dead')),
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (app_id, challenge_id)
) STRICT;

CREATE INDEX captcha_challenges_by_expiry ON captcha_challenges (expires_at);

CREATE TABLE captcha_passes (
    app_id TEXT NOT NULL,
    token_hash TEXT NOT NULL,
    challenge_id TEXT NOT NULL,
    solved_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    redemption TEXT,
    redeemed_at INTEGER,
    PRIMARY KEY (app_id, token_hash),
    FOREIGN KEY (app_id, challenge_id) REFERENCES captcha_challenges (app_id, challenge_id) ON DELETE CASCADE
) STRICT;

CREATE INDEX captcha_passes_by_expiry ON captcha_passes (expires_at);

-- SQLite cannot change a CHECK in place: the attesters table is rebuilt with the new kinds.
CREATE TABLE attesters_rebuilt (
    app_id TEXT NOT NULL REFERENCES apps (app_id),
    attest_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('pow', 'captcha', 'pow+captcha')),
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

INSERT INTO attesters_rebuilt SELECT * FROM attesters;
DROP TABLE attesters;
ALTER TABLE attesters_rebuilt RENAME TO attesters;
