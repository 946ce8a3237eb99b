-- A policy in shadow (issue 32): judged beside the live one on every risk query, its outcome stored
-- with the decision (`review 45`), never answered. One an app.

CREATE TABLE policy_shadows (
    app_id uuid PRIMARY KEY REFERENCES apps (app_id),
    document text NOT NULL,
    version integer,
    started_at timestamptz NOT NULL,
    started_by text NOT NULL
);

ALTER TABLE risk_decisions ADD COLUMN shadow_outcome text;
