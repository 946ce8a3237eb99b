-- The server secret as its SHA-256 (issue 34): a backend's and the gateway's every request compares a
-- hash instead of opening a sealed copy with AES-GCM. New server secrets have no sealed copy (`sealed`
-- empty); `gatehouse serve` fills in the verifier of older ones at start and leaves their sealed copy,
-- which an instance of the previous build still reads during a rolling upgrade, until the secret is
-- rotated.

ALTER TABLE app_secrets ADD COLUMN verifier bytea;
