-- Admin token roles (issue 23): `admin` may do everything, `viewer` only read. Tokens from before
-- keep the power they had.

ALTER TABLE admin_tokens ADD COLUMN role text NOT NULL DEFAULT 'admin' CHECK (role IN ('admin', 'viewer'));
