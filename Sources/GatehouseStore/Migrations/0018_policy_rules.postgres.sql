-- The fraud team's rules (issue 32): each an expression over a query's facts with its effect, mode and
-- scope, kept as written (a query's store copy parses them once per policy read, not per query).
-- A decision keeps what the rules did to it (matched, monitored or failed) as JSON.

CREATE TABLE policy_rules (
    app_id uuid NOT NULL REFERENCES apps (app_id),
    name text NOT NULL,
    -- NULL for every event of the app.
    event_id integer CHECK (event_id BETWEEN 3300 AND 3400),
    expression text NOT NULL,
    -- {"tag": "rule.x", "weight": 40} or {"decide": "review"}
    effect text NOT NULL,
    mode text NOT NULL CHECK (mode IN ('enforce', 'monitor')),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    PRIMARY KEY (app_id, name)
);

ALTER TABLE risk_decisions ADD COLUMN rule_outcomes text;
