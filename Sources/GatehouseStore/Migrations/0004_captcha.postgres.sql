-- Slider captcha: challenges (the answer stays here), single-use pass tokens (stored hashed), and
-- the attester kinds that ask for a captcha.

CREATE TABLE captcha_challenges (
    app_id uuid NOT NULL REFERENCES apps (app_id),
    challenge_id text NOT NULL,
    language text NOT NULL CHECK (language IN ('cn', 'en')),
    device_id text,
    attest_id text,
    action text,
    cdata text,
    hostname text,
    client_address text,
    answer_x integer NOT NULL,
    answer_y integer NOT NULL,
    attempts_left integer NOT NULL CHECK (attempts_left >= 0),
    state text NOT NULL CHECK (state IN ('open', 'passed', 'dead')),
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (app_id, challenge_id)
);

CREATE INDEX captcha_challenges_by_expiry ON captcha_challenges (expires_at);

CREATE TABLE captcha_passes (
    app_id uuid NOT NULL,
    token_hash text NOT NULL,
    challenge_id text NOT NULL,
    solved_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    redemption text,
    redeemed_at timestamptz,
    PRIMARY KEY (app_id, token_hash),
    FOREIGN KEY (app_id, challenge_id) REFERENCES captcha_challenges (app_id, challenge_id) ON DELETE CASCADE
);

CREATE INDEX captcha_passes_by_expiry ON captcha_passes (expires_at);

ALTER TABLE attesters DROP CONSTRAINT attesters_kind_check;
ALTER TABLE attesters ADD CONSTRAINT attesters_kind_check CHECK (kind IN ('pow', 'captcha', 'pow+captcha'));
