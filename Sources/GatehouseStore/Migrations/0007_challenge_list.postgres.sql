-- The operator's challenge list: a device, account or address on it must pass the slider captcha
-- (secondary verification), and its risk decisions are at least `review`.

ALTER TABLE risk_lists DROP CONSTRAINT risk_lists_kind_check;
ALTER TABLE risk_lists ADD CONSTRAINT risk_lists_kind_check CHECK (kind IN ('allow', 'deny', 'challenge'));
