-- The console's overview (issue 23): counts per app, minute, metric and label, added every few
-- seconds by each instance from its memory, so that charts over a week read a few thousand rows
-- instead of millions of decisions. The rankings of rejected decisions read the newest of them
-- through a partial index (on each range of the partitioned table).

CREATE TABLE activity_minutes (
    app_id uuid NOT NULL,
    metric text NOT NULL,
    -- Minutes since 1970 (UTC): a window's buckets are then a division in any SQL.
    minute bigint NOT NULL,
    label text NOT NULL,
    count bigint NOT NULL CHECK (count >= 0),
    PRIMARY KEY (app_id, metric, minute, label)
);

CREATE INDEX risk_decisions_rejected ON risk_decisions (app_id, decided_at) WHERE decision = 'reject';

-- The decisions explorer's filters by account and by address read their newest rows by index, as the
-- device filter does (risk_decisions_by_device), instead of walking the app's rows in time order.
CREATE INDEX risk_decisions_by_account ON risk_decisions (app_id, account_id, decided_at);
CREATE INDEX risk_decisions_by_address ON risk_decisions (app_id, client_address, decided_at);
