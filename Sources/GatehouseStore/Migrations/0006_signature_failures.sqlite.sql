-- Failed request signatures of known devices, kept an hour: adaptive attesters count them. And the
-- attesters whose gate also requires a request signature.

CREATE TABLE signature_failures (
    app_id TEXT NOT NULL,
    failure_id TEXT NOT NULL,
    device_id TEXT NOT NULL,
    reason TEXT NOT NULL,
    failed_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (app_id, failure_id)
) STRICT;

CREATE INDEX signature_failures_by_device ON signature_failures (app_id, device_id, failed_at);
CREATE INDEX signature_failures_by_expiry ON signature_failures (expires_at);

ALTER TABLE attesters ADD COLUMN require_signature INTEGER NOT NULL DEFAULT 0 CHECK (require_signature IN (0, 1));
