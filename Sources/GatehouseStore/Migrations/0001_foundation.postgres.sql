-- Apps, their sealed secrets and registered events, operators' admin tokens, and the audit log.
-- Every app-owned table carries app_id first in its key so that Citus can later distribute by app;
-- apps itself is small and would become a reference table.

CREATE TABLE gatehouse_settings (
    name text PRIMARY KEY,
    value bytea NOT NULL
);

CREATE TABLE apps (
    app_id uuid PRIMARY KEY,
    app_key text NOT NULL UNIQUE CHECK (app_key ~ '^[a-z0-9]{5}$'),
    name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    platforms text NOT NULL,
    status text NOT NULL CHECK (status IN ('active', 'disabled')),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);

CREATE TABLE app_secrets (
    app_id uuid NOT NULL REFERENCES apps (app_id),
    kind text NOT NULL CHECK (kind IN ('sdk', 'server')),
    version integer NOT NULL CHECK (version > 0),
    sealed bytea NOT NULL,
    created_at timestamptz NOT NULL,
    retires_at timestamptz,
    PRIMARY KEY (app_id, kind, version)
);

CREATE TABLE app_events (
    app_id uuid NOT NULL REFERENCES apps (app_id),
    event_id integer NOT NULL CHECK (event_id BETWEEN 3300 AND 3400),
    name text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 100),
    created_at timestamptz NOT NULL,
    PRIMARY KEY (app_id, event_id)
);

CREATE TABLE admin_tokens (
    token_id uuid PRIMARY KEY,
    name text NOT NULL UNIQUE,
    token_hash bytea NOT NULL UNIQUE,
    created_at timestamptz NOT NULL,
    revoked_at timestamptz
);

CREATE TABLE audit_log (
    seq bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    occurred_at timestamptz NOT NULL,
    actor text NOT NULL,
    action text NOT NULL,
    target_type text NOT NULL,
    target_id text NOT NULL,
    app_id uuid,
    before_state text,
    after_state text,
    request_id text,
    source_address text
);

CREATE INDEX audit_log_by_app ON audit_log (app_id, seq);

-- The log is append-only for everyone, including a careless operator with psql.
CREATE FUNCTION audit_log_is_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_log is append-only';
END;
$$;

CREATE TRIGGER audit_log_append_only
    BEFORE UPDATE OR DELETE OR TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_is_append_only();
