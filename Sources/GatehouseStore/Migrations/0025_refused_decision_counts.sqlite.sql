-- A forged flood costs bounded storage (issue 34): of the refused decisions of one app, client
-- address, token state and minute, the first few are stored whole in risk_decisions and the rest are
-- counted here, one row per key (`RefusedDecisionSampler`). Purged with the app's decisions.

CREATE TABLE refused_decision_counts (
    app_id TEXT NOT NULL REFERENCES apps (app_id),
    minute INTEGER NOT NULL,
    client_address TEXT NOT NULL,
    token_state TEXT NOT NULL,
    decisions INTEGER NOT NULL CHECK (decisions > 0),
    first_at INTEGER NOT NULL,
    last_at INTEGER NOT NULL,
    PRIMARY KEY (app_id, minute, client_address, token_state)
) STRICT;

CREATE INDEX refused_decision_counts_by_minute ON refused_decision_counts (minute);
