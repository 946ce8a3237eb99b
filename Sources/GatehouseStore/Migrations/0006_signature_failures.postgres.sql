-- Failed request signatures of known devices, kept an hour: adaptive attesters count them. And the
-- attesters whose gate also requires a request signature.

CREATE TABLE signature_failures (
    app_id uuid NOT NULL,
    failure_id uuid NOT NULL,
    device_id text NOT NULL,
    reason text NOT NULL,
    failed_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (app_id, failure_id)
);

CREATE INDEX signature_failures_by_device ON signature_failures (app_id, device_id, failed_at);
CREATE INDEX signature_failures_by_expiry ON signature_failures (expires_at);

ALTER TABLE attesters ADD COLUMN require_signature integer NOT NULL DEFAULT 0 CHECK (require_signature IN (0, 1));
