-- The operator's challenge list: a device, account or address on it must pass the slider captcha
-- (secondary verification), and its risk decisions are at least `review`.

-- SQLite cannot change a CHECK in place: the risk_lists table is rebuilt with the new kind.
CREATE TABLE risk_lists_rebuilt (
    app_id TEXT NOT NULL REFERENCES apps (app_id),
    entry_id TEXT NOT NULL,
    kind TEXT NOT NULL CHECK (kind IN ('allow', 'deny', 'challenge')),
    subject TEXT NOT NULL CHECK (subject IN ('device', 'account', 'ip', 'cidr')),
    value TEXT NOT NULL,
    note TEXT,
    created_at INTEGER NOT NULL,
    PRIMARY KEY (app_id, entry_id),
    UNIQUE (app_id, kind, subject, value)
) STRICT;

INSERT INTO risk_lists_rebuilt SELECT * FROM risk_lists;
DROP TABLE risk_lists;
ALTER TABLE risk_lists_rebuilt RENAME TO risk_lists;
