-- The embedded twin of 0017_activity.postgres.sql.

CREATE TABLE activity_minutes (
    app_id TEXT NOT NULL,
    metric TEXT NOT NULL,
    minute INTEGER NOT NULL, -- minutes since 1970 (UTC)
    label TEXT NOT NULL,
    count INTEGER NOT NULL CHECK (count >= 0),
    PRIMARY KEY (app_id, metric, minute, label)
) STRICT;

CREATE INDEX risk_decisions_rejected ON risk_decisions (app_id, decided_at) WHERE decision = 'reject';

CREATE INDEX risk_decisions_by_account ON risk_decisions (app_id, account_id, decided_at);
CREATE INDEX risk_decisions_by_address ON risk_decisions (app_id, client_address, decided_at);
