-- The embedded twin of 0019_decision_labels.postgres.sql.

ALTER TABLE risk_decisions ADD COLUMN label TEXT CHECK (label IN ('fraud', 'legitimate'));
ALTER TABLE risk_decisions ADD COLUMN label_kind TEXT;
ALTER TABLE risk_decisions ADD COLUMN label_note TEXT;
ALTER TABLE risk_decisions ADD COLUMN labelled_by TEXT;
ALTER TABLE risk_decisions ADD COLUMN labelled_at INTEGER;
ALTER TABLE risk_decisions ADD COLUMN label_count INTEGER NOT NULL DEFAULT 0;

CREATE INDEX risk_decisions_labelled ON risk_decisions (app_id, decided_at, label, decision) WHERE label IS NOT NULL;
