-- Play Integrity (issue 33): the attester kind playIntegrity, its settings in hardware_settings (JSON,
-- as `HardwareSettingsRow` writes them) and its response keys and service account sealed in
-- sealed_credentials; what the device's latest verdict said, on the device row (read with it by risk
-- queries); STS roles that take a Play Integrity verdict in place of hardware; and the farm signal's
-- pairs: which attested keys or devices an address or network showed, one row per pair as in
-- velocity_edges (kind 1: an address's, 2: a /24 or /48 network's), so that a count reads at most its
-- threshold of rows.

ALTER TABLE attesters DROP CONSTRAINT attesters_kind_check;
ALTER TABLE attesters ADD CONSTRAINT attesters_kind_check
    CHECK (kind IN ('pow', 'captcha', 'pow+captcha', 'appAttest', 'androidKeyAttestation', 'playIntegrity'));
ALTER TABLE attesters DROP CONSTRAINT attesters_hardware_settings_check;
ALTER TABLE attesters ADD CONSTRAINT attesters_hardware_settings_check
    CHECK ((kind IN ('appAttest', 'androidKeyAttestation', 'playIntegrity')) = (hardware_settings IS NOT NULL));
ALTER TABLE attesters ADD COLUMN sealed_credentials bytea;
ALTER TABLE attesters ADD CONSTRAINT attesters_credentials_check CHECK ((kind = 'playIntegrity') = (sealed_credentials IS NOT NULL));
ALTER TABLE attesters ADD COLUMN accept_play_integrity text;

ALTER TABLE devices ADD COLUMN integrity_facts text;
ALTER TABLE devices ADD COLUMN integrity_at timestamptz;

ALTER TABLE storage_roles ADD COLUMN accept_play_integrity text
    CHECK (accept_play_integrity IN ('virtual', 'basic', 'device', 'strong'));

CREATE TABLE attestation_edges (
    app_id uuid NOT NULL,
    kind smallint NOT NULL CHECK (kind IN (1, 2)),
    subject text NOT NULL,
    member text NOT NULL,
    last_seen timestamptz NOT NULL,
    PRIMARY KEY (app_id, kind, subject, member)
);

CREATE INDEX attestation_edges_recent ON attestation_edges (app_id, kind, subject, last_seen);
