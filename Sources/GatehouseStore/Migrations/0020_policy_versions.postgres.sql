-- Policy versions and replays (issue 32). Each change to an app's rules, weights, thresholds, lists or
-- policy rules publishes the whole policy as the next version, in the change's own transaction; the
-- risk queries judge with the newest and each decision records its number and the facts it was
-- judged on (a few dozen bytes, DecisionFacts+Encoding.swift), so that a replay can judge history
-- again with another version or a proposed policy.

CREATE TABLE policy_versions (
    app_id uuid NOT NULL REFERENCES apps (app_id),
    version integer NOT NULL CHECK (version > 0),
    published_at timestamptz NOT NULL,
    published_by text NOT NULL,
    -- The audit action that published it (risk.rule.create, risk.policy.restore, ...).
    change text NOT NULL,
    document text NOT NULL,
    PRIMARY KEY (app_id, version)
);

ALTER TABLE risk_decisions ADD COLUMN policy_version integer NOT NULL DEFAULT 0;
ALTER TABLE risk_decisions ADD COLUMN facts bytea;

-- One replay at a time an app (the partial unique index), its progress written after each page; a
-- replay whose instance stopped writing is abandoned after a minute (ReplayOperations).
CREATE TABLE risk_replays (
    app_id uuid NOT NULL REFERENCES apps (app_id),
    replay_id uuid NOT NULL,
    status text NOT NULL CHECK (status IN ('running', 'completed', 'cancelled', 'failed')),
    requested_by text NOT NULL,
    -- The version replayed, or NULL for a proposed policy.
    proposed_version integer,
    document text NOT NULL,
    window_from timestamptz NOT NULL,
    window_to timestamptz NOT NULL,
    total integer NOT NULL,
    processed integer NOT NULL DEFAULT 0,
    cancel_requested integer NOT NULL DEFAULT 0,
    report text,
    error text,
    started_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    finished_at timestamptz,
    PRIMARY KEY (app_id, replay_id)
);

CREATE UNIQUE INDEX risk_replays_one_running ON risk_replays (app_id) WHERE status = 'running';
CREATE INDEX risk_replays_by_app ON risk_replays (app_id, started_at);

-- The decisions whose outcome a replay changes, the first 10,000 of them (the report counts all).
CREATE TABLE replay_changes (
    app_id uuid NOT NULL,
    replay_id uuid NOT NULL,
    decision_id uuid NOT NULL,
    decided_at timestamptz NOT NULL,
    outcome_before text NOT NULL,
    outcome_after text NOT NULL,
    score_before integer NOT NULL,
    score_after integer NOT NULL,
    PRIMARY KEY (app_id, replay_id, decided_at, decision_id),
    FOREIGN KEY (app_id, replay_id) REFERENCES risk_replays (app_id, replay_id) ON DELETE CASCADE
);
