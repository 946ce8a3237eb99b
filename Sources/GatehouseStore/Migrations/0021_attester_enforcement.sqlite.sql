-- The embedded twin of 0021_attester_enforcement.postgres.sql.

ALTER TABLE attesters ADD COLUMN enforcement TEXT NOT NULL DEFAULT 'enforce' CHECK (enforcement IN ('enforce', 'monitor'));
