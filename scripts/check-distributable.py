#!/usr/bin/env python3
"""The schema stays ready to be sharded by app (Citus, distributed by app_id; docs/operations.md):

- every table of a migrated PostgreSQL database either carries `app_id` or is one of the few global
  tables below (operators' tokens and sessions, signing keys, settings, the audit log, the migrations),
  so a new table must say which it is;
- every table with `app_id` has it in its primary key and in every unique constraint and unique index
  (a shard can then check uniqueness alone), partitions included;
- every foreign key from such a table carries `app_id` on both sides, or references `apps (app_id)`
  itself, so no row points at another app's;
- every JOIN in the store's SQL (Sources/GatehouseStore) matches `app_id` on both sides (or pins it
  to one bound app), so no statement joins rows of two apps.

    scripts/check-distributable.py --database-url postgres://...   prints each breach, exits 1 on any
"""
import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# Tables that belong to the deployment, not to an app: each is small and grows with operators, not
# with traffic (the audit log grows with operators' changes; its rows name their app in a column).
GLOBAL_TABLES = {"gatehouse_settings", "gatehouse_migrations", "admin_tokens", "console_sessions", "signing_keys", "audit_log"}


def rows(url, sql, schema=None):
    env = dict(os.environ, PGOPTIONS="-c search_path=%s" % schema) if schema else None
    result = subprocess.run(["psql", "-XAtq", "-F", "\t", url, "-c", sql], capture_output=True, text=True, check=True, env=env)
    return [line.split("\t") for line in result.stdout.splitlines() if line]


def schema_problems(url, schema=None):
    problems = []
    tables = rows(url, """
        SELECT c.relname, c.relispartition,
               EXISTS (SELECT 1 FROM pg_attribute a WHERE a.attrelid = c.oid AND a.attname = 'app_id' AND NOT a.attisdropped)
        FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p') ORDER BY c.relname""", schema)
    with_app = set()
    for name, partition, has_app in tables:
        if has_app == "t" and name not in GLOBAL_TABLES:
            with_app.add(name)
        elif partition == "f" and name not in GLOBAL_TABLES:
            problems.append("table %s has no app_id and is not one of the global tables (scripts/check-distributable.py)" % name)
    # Primary keys and unique constraints, and unique indexes that back no constraint.
    for table, kind, name, columns in rows(url, """
        SELECT c.relname, 'constraint', con.conname,
               array_to_string(ARRAY(SELECT a.attname FROM unnest(con.conkey) k JOIN pg_attribute a
                                     ON a.attrelid = c.oid AND a.attnum = k), ',')
        FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND con.contype IN ('p', 'u')
        UNION ALL
        SELECT c.relname, 'index', i.relname,
               array_to_string(ARRAY(SELECT a.attname FROM unnest(x.indkey::int2[]) k JOIN pg_attribute a
                                     ON a.attrelid = c.oid AND a.attnum = k), ',')
        FROM pg_index x JOIN pg_class c ON c.oid = x.indrelid JOIN pg_class i ON i.oid = x.indexrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND x.indisunique
          AND NOT EXISTS (SELECT 1 FROM pg_constraint con WHERE con.conindid = x.indexrelid)""", schema):
        if table in with_app and table != "apps" and "app_id" not in columns.split(","):
            problems.append("%s: unique %s %s (%s) lacks app_id" % (table, kind, name, columns))
    for table, name, columns, target, target_columns in rows(url, """
        SELECT c.relname, con.conname,
               array_to_string(ARRAY(SELECT a.attname FROM unnest(con.conkey) k JOIN pg_attribute a
                                     ON a.attrelid = c.oid AND a.attnum = k), ','),
               t.relname,
               array_to_string(ARRAY(SELECT a.attname FROM unnest(con.confkey) k JOIN pg_attribute a
                                     ON a.attrelid = t.oid AND a.attnum = k), ',')
        FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid JOIN pg_class t ON t.oid = con.confrelid
        JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = current_schema() AND con.contype = 'f'""", schema):
        if table not in with_app:
            continue
        if "app_id" not in columns.split(",") or "app_id" not in target_columns.split(","):
            problems.append("%s: foreign key %s (%s) -> %s (%s) does not carry app_id on both sides"
                            % (table, name, columns, target, target_columns))
    if schema is None and "apps" not in with_app:
        problems.append("apps has no app_id")
    return problems


SELF_TEST = """
DROP SCHEMA IF EXISTS distcheck_selftest CASCADE;
CREATE SCHEMA distcheck_selftest;
SET search_path = distcheck_selftest;
CREATE TABLE apps (app_id uuid PRIMARY KEY);
CREATE TABLE keyed_by_id (app_id uuid NOT NULL, id text PRIMARY KEY);
CREATE TABLE unique_without_app (app_id uuid NOT NULL, id text, code text UNIQUE, PRIMARY KEY (app_id, id));
CREATE TABLE pointing_across (app_id uuid NOT NULL, id text, other text REFERENCES keyed_by_id (id), PRIMARY KEY (app_id, id));
CREATE TABLE no_app (id text PRIMARY KEY);
"""


def self_test(url):
    """The check finds each kind of breach in a schema built to have them (a check that cannot fail proves nothing)."""
    subprocess.run(["psql", "-XAtq", "-v", "ON_ERROR_STOP=1", url, "-c", SELF_TEST], capture_output=True, text=True, check=True)
    try:
        found = " | ".join(schema_problems(url, "distcheck_selftest"))
    finally:
        subprocess.run(["psql", "-XAtq", url, "-c", "DROP SCHEMA distcheck_selftest CASCADE"], capture_output=True, check=True)
    expected = ["keyed_by_id: unique constraint keyed_by_id_pkey", "unique_without_app: unique constraint unique_without_app_code_key",
                "pointing_across: foreign key", "table no_app has no app_id"]
    missed = [breach for breach in expected if breach not in found]
    if missed:
        print("the check missed breaches it was built to find: %s (found: %s)" % (missed, found))
        sys.exit(1)


JOIN = re.compile(r"\bJOIN\s+(\w+)(?:\s+(?:AS\s+)?(\w+))?\s+ON\s+(.*?)(?=\bWHERE\b|\bJOIN\b|\bORDER\b|\bGROUP\b|\bLIMIT\b|\)|\"\"\"|$)",
                  re.S | re.I)


def join_problems():
    """Every JOIN ... ON in the store's SQL compares app_id of both sides."""
    problems = []
    store = os.path.join(ROOT, "Sources", "GatehouseStore")
    for directory, _, names in os.walk(store):
        for name in sorted(names):
            if not name.endswith(".swift"):
                continue
            path = os.path.join(directory, name)
            with open(path) as handle:
                text = handle.read()
            for match in JOIN.finditer(text):
                condition = " ".join(match.group(3).split())
                # The catalog and the global tables hold no app's rows; a join pinned to one bound app
                # (`devices.app_id = \(app)`) reads one app's.
                if match.group(1).startswith("pg_") or match.group(1) in GLOBAL_TABLES:
                    continue
                if not re.search(r"\w*\.?app_id\s*=\s*(?:\w*\.?app_id|\\\()", condition):
                    line = text.count("\n", 0, match.start()) + 1
                    problems.append("%s:%d: JOIN %s ON %s does not match app_id on both sides"
                                    % (os.path.relpath(path, ROOT), line, match.group(1), condition[:80]))
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--database-url", required=True, help="a PostgreSQL database migrated to this build's schema")
    args = parser.parse_args()
    self_test(args.database_url)
    problems = schema_problems(args.database_url) + join_problems()
    for problem in problems:
        print(problem)
    if problems:
        sys.exit(1)
    print("distributable: every app table keyed and referenced by app_id, no statement joins two apps")


if __name__ == "__main__":
    main()
