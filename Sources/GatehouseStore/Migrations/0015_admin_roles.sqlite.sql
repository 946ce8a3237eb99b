-- The embedded twin of 0015_admin_roles.postgres.sql.

ALTER TABLE admin_tokens ADD COLUMN role TEXT NOT NULL DEFAULT 'admin' CHECK (role IN ('admin', 'viewer'));
