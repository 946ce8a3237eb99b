-- Device-minted ztokens (issue 21): the device mints its tokens offline, so the server no longer
-- stores issued tokens. A risk query records the id of the token it consumes (single use is the
-- primary key) and keeps it only until the token's expiry; tokens minted by the H5 bridge note their
-- page. Tokens of the earlier format (version 1) are refused as forged from now on: they lived at
-- most the app's ztoken lifetime, so an upgrade costs the tokens in flight a retry.

CREATE TABLE consumed_ztokens (
    app_id uuid NOT NULL,
    token_id text NOT NULL,
    device_id text NOT NULL,
    consumed_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (app_id, token_id)
);

CREATE INDEX consumed_ztokens_by_device ON consumed_ztokens (app_id, device_id, consumed_at);

CREATE INDEX consumed_ztokens_by_expiry ON consumed_ztokens (expires_at);

CREATE TABLE ztoken_pages (
    app_id uuid NOT NULL,
    token_id text NOT NULL,
    page_url text NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (app_id, token_id)
);

CREATE INDEX ztoken_pages_by_expiry ON ztoken_pages (expires_at);

DROP TABLE ztokens;

-- A velocity count walks (app_id, kind, subject, last_seen) newest first and stops at its LIMIT. An
-- index on last_seen alone offered the planner another path to the same order, through every
-- subject's recent rows; the purge that used it scans the table in bounded batches instead.
DROP INDEX velocity_edges_by_age;
