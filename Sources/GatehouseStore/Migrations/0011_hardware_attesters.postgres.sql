-- Hardware attestation, second step: the attester kinds appAttest and androidKeyAttestation with
-- their settings (JSON, as `HardwareSettingsRow` writes them), attesters of any kind that require a
-- hardware-attested device, and what the hardware said of each device, read with the device row
-- by risk queries (no further lookup on that path); and STS roles that require a hardware-attested device.

ALTER TABLE attesters DROP CONSTRAINT attesters_kind_check;
ALTER TABLE attesters ADD CONSTRAINT attesters_kind_check
    CHECK (kind IN ('pow', 'captcha', 'pow+captcha', 'appAttest', 'androidKeyAttestation'));
ALTER TABLE attesters ADD COLUMN hardware_settings text;
ALTER TABLE attesters ADD COLUMN require_hardware integer NOT NULL DEFAULT 0 CHECK (require_hardware IN (0, 1));
ALTER TABLE attesters ADD CONSTRAINT attesters_hardware_settings_check
    CHECK ((kind IN ('appAttest', 'androidKeyAttestation')) = (hardware_settings IS NOT NULL));

ALTER TABLE devices ADD COLUMN hardware_facts text;
ALTER TABLE devices ADD COLUMN hardware_attested_at timestamptz;
ALTER TABLE devices ADD COLUMN attestation_failed_at timestamptz;

ALTER TABLE storage_roles ADD COLUMN require_hardware integer NOT NULL DEFAULT 0 CHECK (require_hardware IN (0, 1));
