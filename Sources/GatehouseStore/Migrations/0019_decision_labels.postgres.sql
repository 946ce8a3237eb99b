-- Labels (issue 32): what a decision turned out to be, said by the app's backend or an operator. A
-- decision keeps its last label in its own row, so that a label goes when its decision's day does and
-- the explorer filters by it without a join; every label given is in the audit log, and label_count
-- bounds how many one decision takes.

ALTER TABLE risk_decisions ADD COLUMN label text CHECK (label IN ('fraud', 'legitimate'));
ALTER TABLE risk_decisions ADD COLUMN label_kind text;
ALTER TABLE risk_decisions ADD COLUMN label_note text;
ALTER TABLE risk_decisions ADD COLUMN labelled_by text;
ALTER TABLE risk_decisions ADD COLUMN labelled_at timestamptz;
ALTER TABLE risk_decisions ADD COLUMN label_count integer NOT NULL DEFAULT 0;

-- The explorer's label filter and the overview's labelled counts read only labelled decisions.
CREATE INDEX risk_decisions_labelled ON risk_decisions (app_id, decided_at, label, decision) WHERE label IS NOT NULL;
