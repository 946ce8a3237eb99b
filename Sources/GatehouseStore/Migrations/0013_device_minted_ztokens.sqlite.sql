-- The embedded twin of 0013_device_minted_ztokens.postgres.sql (times in milliseconds since 1970).

CREATE TABLE consumed_ztokens (
    app_id TEXT NOT NULL,
    token_id TEXT NOT NULL,
    device_id TEXT NOT NULL,
    consumed_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (app_id, token_id)
) STRICT;

CREATE INDEX consumed_ztokens_by_device ON consumed_ztokens (app_id, device_id, consumed_at);

CREATE INDEX consumed_ztokens_by_expiry ON consumed_ztokens (expires_at);

CREATE TABLE ztoken_pages (
    app_id TEXT NOT NULL,
    token_id TEXT NOT NULL,
    page_url TEXT NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (app_id, token_id)
) STRICT;

CREATE INDEX ztoken_pages_by_expiry ON ztoken_pages (expires_at);

DROP TABLE ztokens;

-- A velocity count walks (app_id, kind, subject, last_seen) newest first and stops at its LIMIT. An
-- index on last_seen alone offered the planner another path to the same order, through every
-- subject's recent rows; the purge that used it scans the table in bounded batches instead.
DROP INDEX velocity_edges_by_age;
