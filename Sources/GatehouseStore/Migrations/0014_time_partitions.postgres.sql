-- Retention by partitions (issue 22). The tables that grow with traffic, most of it unauthenticated
-- under attack, are kept as time ranges: decisions by the day they were made, the single-use and
-- expiring rows by six hours of their expiry. Retention drops a range whole instead of deleting its
-- rows; Gatehouse creates the ranges ahead and drops them (TimePartitions.swift), with no extension.
--
-- A unique key of a partitioned table must hold the partition key, so every primary key gains its
-- time column. Single use still holds because that time is fixed by what is being used: a ztoken's
-- `expires_at` comes from its MAC'd fields, a request nonce's from its signed timestamp, a PoW
-- solution's from its signed challenge; captcha, signature and decision ids are random and written
-- once. The captcha pass no longer points at its challenge by a foreign key (it would have to name
-- the challenge's expiry); the challenge's range is kept an hour past its passes' instead.
--
-- Rows written before this migration stay where they are: each table that has rows becomes the
-- range "before <its first boundary after now>" of its new parent, dropped once that is past. A default
-- range catches rows outside every range (a clock far off, a keeper that fell behind); they are moved
-- into their range when it is created, and deleted by rows otherwise.

ALTER TABLE captcha_passes DROP CONSTRAINT captcha_passes_app_id_challenge_id_fkey;

-- Expired rows leave with their range: the expiry indexes only served the row deletes.
DROP INDEX sdk_nonces_by_expiry;
DROP INDEX attest_solutions_by_expiry;
DROP INDEX captcha_challenges_by_expiry;
DROP INDEX captcha_passes_by_expiry;
DROP INDEX signature_failures_by_expiry;
DROP INDEX consumed_ztokens_by_expiry;

CREATE FUNCTION gatehouse_partition_0014(tbl text, keycol text, width_seconds bigint, primary_key text) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    newest timestamptz;
    bound timestamptz;
    legacy text;
    old_index record;
BEGIN
    EXECUTE format('SELECT max(%I) FROM %I', keycol, tbl) INTO newest;
    bound := to_timestamp((floor(extract(epoch FROM greatest(newest, now())) / width_seconds) + 1) * width_seconds);
    legacy := tbl || '_before_' || to_char(bound AT TIME ZONE 'UTC', 'YYYYMMDDHH24');
    EXECUTE format('ALTER TABLE %I RENAME TO %I', tbl, legacy);
    -- A table has one primary key: the old one gives way to the parent's, which ATTACH builds.
    EXECUTE format('ALTER TABLE %I DROP CONSTRAINT %I', legacy, tbl || '_pkey');
    FOR old_index IN SELECT indexname FROM pg_indexes WHERE schemaname = current_schema() AND tablename = legacy LOOP
        EXECUTE format('ALTER INDEX %I RENAME TO %I', old_index.indexname, old_index.indexname || '_0013');
    END LOOP;
    EXECUTE format(
        'CREATE TABLE %I (LIKE %I INCLUDING DEFAULTS INCLUDING CONSTRAINTS, PRIMARY KEY (%s)) PARTITION BY RANGE (%I)',
        tbl, legacy, primary_key, keycol);
    -- An empty table (a new installation) leaves no range behind.
    IF newest IS NULL THEN
        EXECUTE format('DROP TABLE %I', legacy);
    ELSE
        EXECUTE format('ALTER TABLE %I ATTACH PARTITION %I FOR VALUES FROM (MINVALUE) TO (%L)', tbl, legacy, bound);
    END IF;
    EXECUTE format('CREATE TABLE %I PARTITION OF %I DEFAULT', tbl || '_default', tbl);
END
$$;

SELECT gatehouse_partition_0014('risk_decisions', 'decided_at', 86400, 'app_id, decision_id, decided_at');
SELECT gatehouse_partition_0014('consumed_ztokens', 'expires_at', 21600, 'app_id, token_id, expires_at');
SELECT gatehouse_partition_0014('sdk_nonces', 'expires_at', 21600, 'app_id, nonce, expires_at');
SELECT gatehouse_partition_0014('attest_solutions', 'expires_at', 21600, 'app_id, replay_key, expires_at');
SELECT gatehouse_partition_0014('captcha_challenges', 'expires_at', 21600, 'app_id, challenge_id, expires_at');
SELECT gatehouse_partition_0014('captcha_passes', 'expires_at', 21600, 'app_id, token_hash, expires_at');
SELECT gatehouse_partition_0014('signature_failures', 'expires_at', 21600, 'app_id, failure_id, expires_at');

DROP FUNCTION gatehouse_partition_0014(text, text, bigint, text);

-- The parents' indexes, named as before: the old tables' equal indexes are attached, not rebuilt.
CREATE INDEX risk_decisions_by_time ON risk_decisions (app_id, decided_at, decision_id);
CREATE INDEX risk_decisions_by_device ON risk_decisions (app_id, device_id, decided_at);
CREATE INDEX consumed_ztokens_by_device ON consumed_ztokens (app_id, device_id, consumed_at);
CREATE INDEX signature_failures_by_device ON signature_failures (app_id, device_id, failed_at);

ALTER TABLE captcha_challenges ADD FOREIGN KEY (app_id) REFERENCES apps (app_id);
