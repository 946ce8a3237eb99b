-- The embedded twin of 0018_policy_rules.postgres.sql.

CREATE TABLE policy_rules (
    app_id TEXT NOT NULL REFERENCES apps (app_id),
    name TEXT NOT NULL,
    event_id INTEGER CHECK (event_id BETWEEN 3300 AND 3400),
    expression TEXT NOT NULL,
    effect TEXT NOT NULL,
    mode TEXT NOT NULL CHECK (mode IN ('enforce', 'monitor')),
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (app_id, name)
) STRICT;

ALTER TABLE risk_decisions ADD COLUMN rule_outcomes TEXT;
