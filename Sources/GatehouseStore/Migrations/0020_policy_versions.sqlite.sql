-- The embedded twin of 0020_policy_versions.postgres.sql.

CREATE TABLE policy_versions (
    app_id TEXT NOT NULL REFERENCES apps (app_id),
    version INTEGER NOT NULL CHECK (version > 0),
    published_at INTEGER NOT NULL,
    published_by TEXT NOT NULL,
    change TEXT NOT NULL,
    document TEXT NOT NULL,
    PRIMARY KEY (app_id, version)
) STRICT;

ALTER TABLE risk_decisions ADD COLUMN policy_version INTEGER NOT NULL DEFAULT 0;
ALTER TABLE risk_decisions ADD COLUMN facts BLOB;

CREATE TABLE risk_replays (
    app_id TEXT NOT NULL REFERENCES apps (app_id),
    replay_id TEXT NOT NULL,
    status TEXT NOT NULL CHECK (status IN ('running', 'completed', 'cancelled', 'failed')),
    requested_by TEXT NOT NULL,
    proposed_version INTEGER,
    document TEXT NOT NULL,
    window_from INTEGER NOT NULL,
    window_to INTEGER NOT NULL,
    total INTEGER NOT NULL,
    processed INTEGER NOT NULL DEFAULT 0,
    cancel_requested INTEGER NOT NULL DEFAULT 0,
    report TEXT,
    error TEXT,
    started_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    finished_at INTEGER,
    PRIMARY KEY (app_id, replay_id)
) STRICT;

CREATE UNIQUE INDEX risk_replays_one_running ON risk_replays (app_id) WHERE status = 'running';
CREATE INDEX risk_replays_by_app ON risk_replays (app_id, started_at);

CREATE TABLE replay_changes (
    app_id TEXT NOT NULL,
    replay_id TEXT NOT NULL,
    decision_id TEXT NOT NULL,
    decided_at INTEGER NOT NULL,
    outcome_before TEXT NOT NULL,
    outcome_after TEXT NOT NULL,
    score_before INTEGER NOT NULL,
    score_after INTEGER NOT NULL,
    PRIMARY KEY (app_id, replay_id, decided_at, decision_id),
    FOREIGN KEY (app_id, replay_id) REFERENCES risk_replays (app_id, replay_id) ON DELETE CASCADE
) STRICT;
