-- Velocity with bounded cost (issue 21): who was seen with whom, one row per pair however many
-- tokens the pair has, so that each distinct count reads at most its threshold + 1 rows
-- (`LIMIT`), whatever an attack piled into the windows. kind 1: a device's accounts; 2: an
-- account's devices; 3: an address's devices. Written with each batch of issued ztokens.

CREATE TABLE velocity_edges (
    app_id uuid NOT NULL,
    kind smallint NOT NULL CHECK (kind IN (1, 2, 3)),
    subject text NOT NULL,
    member text NOT NULL,
    last_seen timestamptz NOT NULL,
    PRIMARY KEY (app_id, kind, subject, member)
);

CREATE INDEX velocity_edges_recent ON velocity_edges (app_id, kind, subject, last_seen);

CREATE INDEX velocity_edges_by_age ON velocity_edges (last_seen);

-- The windows' history carries over: the last day's tokens as pairs.
INSERT INTO velocity_edges (app_id, kind, subject, member, last_seen)
SELECT app_id, 1, device_id, account_id, max(issued_at) FROM ztokens WHERE issued_at > now() - interval '1 day'
GROUP BY app_id, device_id, account_id;
INSERT INTO velocity_edges (app_id, kind, subject, member, last_seen)
SELECT app_id, 2, account_id, device_id, max(issued_at) FROM ztokens WHERE issued_at > now() - interval '1 day'
GROUP BY app_id, account_id, device_id;
INSERT INTO velocity_edges (app_id, kind, subject, member, last_seen)
SELECT app_id, 3, issued_from, device_id, max(issued_at) FROM ztokens
WHERE issued_at > now() - interval '1 day' AND issued_from IS NOT NULL
GROUP BY app_id, issued_from, device_id;
