-- Monitor before enforce, for attesters (issue 32): in `monitor` the gate lets every request through
-- and says what it found; every existing attester keeps enforcing.

ALTER TABLE attesters ADD COLUMN enforcement text NOT NULL DEFAULT 'enforce' CHECK (enforcement IN ('enforce', 'monitor'));
