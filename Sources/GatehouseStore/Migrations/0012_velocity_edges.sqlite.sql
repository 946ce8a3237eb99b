-- The embedded twin of 0012_velocity_edges.postgres.sql (times in milliseconds since 1970).

CREATE TABLE velocity_edges (
    app_id TEXT NOT NULL,
    kind INTEGER NOT NULL CHECK (kind IN (1, 2, 3)),
    subject TEXT NOT NULL,
    member TEXT NOT NULL,
    last_seen INTEGER NOT NULL,
    PRIMARY KEY (app_id, kind, subject, member)
) STRICT;

CREATE INDEX velocity_edges_recent ON velocity_edges (app_id, kind, subject, last_seen);

CREATE INDEX velocity_edges_by_age ON velocity_edges (last_seen);

INSERT INTO velocity_edges (app_id, kind, subject, member, last_seen)
SELECT app_id, 1, device_id, account_id, max(issued_at) FROM ztokens
WHERE issued_at > (CAST(strftime('%s', 'now') AS INTEGER) - 86400) * 1000
GROUP BY app_id, device_id, account_id;
INSERT INTO velocity_edges (app_id, kind, subject, member, last_seen)
SELECT app_id, 2, account_id, device_id, max(issued_at) FROM ztokens
WHERE issued_at > (CAST(strftime('%s', 'now') AS INTEGER) - 86400) * 1000
GROUP BY app_id, account_id, device_id;
INSERT INTO velocity_edges (app_id, kind, subject, member, last_seen)
SELECT app_id, 3, issued_from, device_id, max(issued_at) FROM ztokens
WHERE issued_at > (CAST(strftime('%s', 'now') AS INTEGER) - 86400) * 1000 AND issued_from IS NOT NULL
GROUP BY app_id, issued_from, device_id;
