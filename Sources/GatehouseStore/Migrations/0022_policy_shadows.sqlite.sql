-- The embedded twin of 0022_policy_shadows.postgres.sql.

CREATE TABLE policy_shadows (
    app_id TEXT PRIMARY KEY REFERENCES apps (app_id),
    document TEXT NOT NULL,
    version INTEGER,
    started_at INTEGER NOT NULL,
    started_by TEXT NOT NULL
) STRICT;

ALTER TABLE risk_decisions ADD COLUMN shadow_outcome TEXT;
