-- A forged flood costs bounded storage (issue 34): of the refused decisions of one app, client
-- address, token state and minute, the first few are stored whole in risk_decisions and the rest are
-- counted here, one row per key (`RefusedDecisionSampler`). Every instance adds its counts to the
-- same row. Purged with the app's decisions (retention days).

CREATE TABLE refused_decision_counts (
    app_id uuid NOT NULL REFERENCES apps (app_id),
    minute timestamptz NOT NULL,
    client_address text NOT NULL,
    token_state text NOT NULL,
    decisions bigint NOT NULL CHECK (decisions > 0),
    first_at timestamptz NOT NULL,
    last_at timestamptz NOT NULL,
    PRIMARY KEY (app_id, minute, client_address, token_state)
);

-- The listing's order (newest minute first) across apps.
CREATE INDEX refused_decision_counts_by_minute ON refused_decision_counts (minute);
