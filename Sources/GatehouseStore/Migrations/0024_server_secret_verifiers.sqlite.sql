-- The embedded twin of 0024_server_secret_verifiers.postgres.sql.

ALTER TABLE app_secrets ADD COLUMN verifier BLOB;
