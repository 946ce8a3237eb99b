-- The console's overview (issue 23): counts per app, minute, metric and label, added every few
-- seconds by each instance from its memory, so that charts over a week read a few thousand rows
-- instead of millions of decisions. The rankings of rejected decisions read the newest of them
-- through a partial index (on each range of the partitioned table).

CREATE TABLE activity_minutes (
    app_id uuid NOT NULL,
    metric text NOT NULL,
    minute timestamptz NOT NULL,
    label text NOT NULL,
    count bigint NOT NULL CHECK (count >= 0),
    PRIMARY KEY (app_id, metric, minute, label)
);

CREATE INDEX risk_decisions_rejected ON risk_decisions (app_id, decided_at) WHERE decision = 'reject';
