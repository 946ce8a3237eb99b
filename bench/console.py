#!/usr/bin/env python3
"""The console's overview and decisions explorer at 10 million decisions (issue 23).

Started by bench/console, which builds the binary. A throwaway PostgreSQL and Gatehouse against it;
one app's decisions (--rows, 10 million by default) seeded over the last seven days in the daily
ranges the keeper names (70% pass, 15% review, 15% reject; 200,000 devices, 50,000 accounts, 10,000
addresses, a few tags each), and the overview's per-minute counters made from those rows as the
server makes them as it decides. Then, signed in to the console as a browser is, each page is asked
for --repeat times in a row and timed from the request to the last byte:

  - the overview over 1 hour, 24 hours and 7 days (the 7-day window holds every seeded row);
  - the explorer's first page for the app, and filtered by a device, by rejected decisions, by a
    tag, by an address.

Prints each page's median, p95 and max, and (unless --smoke) writes them to docs/PERFORMANCE.md
between its markers. The bound the issue sets: each under 300 ms at 10 million rows.

    bench/console.py --binary PATH [--rows 10000000] [--repeat 20] [--smoke] [--output docs/PERFORMANCE.md]
"""
import argparse
import base64
import datetime
import hashlib
import http.client
import os
import statistics
import sys
import tempfile
import time
import urllib.parse

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402

BEGIN = "<!-- bench/console writes from here -->"
END = "<!-- bench/console writes up to here -->"
BOUND_MS = 300
# The counters' minute: minutes since 1970.
MINUTE_SQL = "floor(extract(epoch FROM decided_at) / 60)::bigint"
# A device id as the server makes them (22 base64url characters of 16 bytes), from a number.
DEVICE_SQL = "rtrim(translate(encode(decode(md5('d' || (%s)), 'hex'), 'base64'), '+/', '-_'), '=')"


def device_id(number):
    return base64.urlsafe_b64encode(hashlib.md5(("d%d" % number).encode()).digest()).decode().rstrip("=")


def seed(cluster, app_id, rows, days):
    """`rows` decisions spread over the last `days` days, each day in its range; seconds it took."""
    started = time.monotonic()
    today = datetime.datetime.now(datetime.timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
    for back in range(days, -1, -1):
        day = today - datetime.timedelta(days=back)
        name = "risk_decisions_p" + day.strftime("%Y%m%d%H")
        if cluster.sql("SELECT count(*) FROM pg_class WHERE relname = '%s'" % name) == "0":
            cluster.sql("CREATE TABLE %s PARTITION OF risk_decisions FOR VALUES FROM ('%s') TO ('%s')"
                        % (name, day.isoformat(), (day + datetime.timedelta(days=1)).isoformat()))
    span = days * 86400 - 120
    cluster.sql(
        "INSERT INTO risk_decisions (app_id, decision_id, decided_at, event_id, account_id, device_id, token_id, token_state, "
        "client_address, user_agent, page_url, score, decision, tags) "
        "SELECT '%(app)s', gen_random_uuid(), now() - interval '60 seconds' - (t * %(span)d.0 / %(rows)d) * interval '1 second', "
        "3301 + t %% 3, 'account-' || (t * 7919 %% 50000), %(device)s, md5(t::text), "
        "(ARRAY['fresh', 'fresh', 'fresh', 'replayed', 'expired'])[1 + t %% 5], "
        "'198.51.' || (t * 31 %% 40) || '.' || (t * 17 %% 250), 'okhttp/4.12', NULL, t %% 100, "
        "CASE WHEN t %% 20 < 14 THEN 'pass' WHEN t %% 20 < 17 THEN 'review' ELSE 'reject' END, "
        "CASE WHEN t %% 20 < 14 THEN '[]' WHEN t %% 20 < 17 THEN '[{\"tag\":\"device.vpn\",\"reason\":\"vpn\",\"weight\":10}]' "
        "ELSE '[{\"tag\":\"token.replayed\",\"reason\":\"seen\",\"weight\":100},{\"tag\":\"device.simulator\",\"reason\":\"sim\",\"weight\":40}]' END "
        "FROM generate_series(1::bigint, %(rows)d) t" % {"app": app_id, "span": span, "rows": rows, "device": DEVICE_SQL % "t * 104729 % 200000"})
    # The counters the server keeps as it decides, from the same rows.
    for metric, label in (("decision", "decision"), ("token_state", "token_state")):
        cluster.sql(
            "INSERT INTO activity_minutes (app_id, metric, minute, label, count) SELECT app_id, '%s', %s, %s, "
            "count(*) FROM risk_decisions WHERE app_id = '%s' GROUP BY 1, 3, 4" % (metric, MINUTE_SQL, label, app_id))
    cluster.sql(
        "INSERT INTO activity_minutes (app_id, metric, minute, label, count) SELECT app_id, 'tag', %s, "
        "hit->>'tag', count(*) FROM risk_decisions, jsonb_array_elements(tags::jsonb) AS hit WHERE app_id = '%s' GROUP BY 1, 3, 4"
        % (MINUTE_SQL, app_id))
    cluster.sql("VACUUM ANALYZE")
    cluster.sql("CHECKPOINT")
    return time.monotonic() - started


class Browser:
    """A signed-in console session over one keep-alive connection, as a browser holds one."""

    def __init__(self, server):
        parsed = urllib.parse.urlsplit(server.url)
        self.connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=60)
        self.connection.request("POST", "/console/sign-in", urllib.parse.urlencode({"token": server.admin_token}),
                                {"Content-Type": "application/x-www-form-urlencoded"})
        response = self.connection.getresponse()
        response.read()
        assert response.status == 303, response.status
        self.cookie = response.getheader("Set-Cookie").split(";", 1)[0]

    def timed(self, path):
        started = time.monotonic()
        self.connection.request("GET", path, headers={"Cookie": self.cookie})
        response = self.connection.getresponse()
        body = response.read()
        elapsed = (time.monotonic() - started) * 1000
        assert response.status == 200, (path, response.status, body[:300])
        return elapsed, body.decode()


def measure(browser, path, repeat, expect):
    browser.timed(path)
    samples = []
    for _ in range(repeat):
        elapsed, page = browser.timed(path)
        samples.append(elapsed)
    assert expect in page, (path, expect)
    samples.sort()
    return {"median": statistics.median(samples), "p95": samples[min(len(samples) - 1, int(len(samples) * 0.95))], "max": samples[-1]}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--smoke", action="store_true", help="20,000 rows, 3 repeats, nothing written")
    parser.add_argument("--output", default=os.path.join(bench.ROOT, "docs", "PERFORMANCE.md"))
    parser.add_argument("--command", default="bench/console")
    arguments = parser.parse_args()
    rows = 20_000 if arguments.smoke else arguments.rows
    repeat = 3 if arguments.smoke else arguments.repeat
    work = tempfile.mkdtemp(prefix="gatehouse-console-")
    os.chmod(work, 0o755)
    cluster = bench.Cluster(work)
    server = None
    try:
        server = bench.Server(arguments.binary, cluster, work)
        app = bench.App(server)
        app_id = cluster.sql("SELECT app_id FROM apps WHERE app_key = '%s'" % app.key)
        seeded = seed(cluster, app_id, rows, 7)
        print("seeded %d decisions over 7 days in %.1f s" % (rows, seeded), flush=True)
        browser = Browser(server)
        device = device_id(1 * 104729 % 200000)
        pages = [
            ("overview, 1 hour", "/console/apps/%s/overview?window=1h" % app.key, "decisions-chart"),
            ("overview, 24 hours", "/console/apps/%s/overview?window=24h" % app.key, "decisions-chart"),
            ("overview, 7 days", "/console/apps/%s/overview?window=7d" % app.key, "decisions-chart"),
            ("explorer, the app's first page", "/console/decisions?appKey=%s" % app.key, "next-page"),
            ("explorer, by device", "/console/decisions?appKey=%s&deviceId=%s" % (app.key, device), device),
            ("explorer, rejected", "/console/decisions?appKey=%s&decision=reject" % app.key, "outcome-reject"),
            ("explorer, by tag", "/console/decisions?appKey=%s&tag=device.vpn" % app.key, "device.vpn"),
            ("explorer, by address", "/console/decisions?appKey=%s&address=198.51.7.17" % app.key, "198.51.7.17"),
        ]
        results = []
        for name, path, expect in pages:
            measured = measure(browser, path, repeat, expect)
            results.append((name, measured))
            print("%-32s median %7.1f ms  p95 %7.1f ms  max %7.1f ms" % (name, measured["median"], measured["p95"], measured["max"]), flush=True)
        slow = [name for name, measured in results if measured["p95"] > BOUND_MS]
        if not arguments.smoke:
            write_section(arguments, rows, seeded, results)
        if slow and not arguments.smoke:
            raise SystemExit("over %d ms at p95: %s" % (BOUND_MS, ", ".join(slow)))
    finally:
        if server:
            server.stop()
        cluster.stop()


def write_section(arguments, rows, seeded, results):
    lines = [
        BEGIN,
        "",
        "`%s` (%s), %s decisions of one app over 7 days seeded in %.0f s; each page %d times over one" % (
            arguments.command, datetime.date.today().isoformat(), "{:,}".format(rows), seeded, arguments.repeat),
        "signed-in keep-alive connection, from the request to the last byte:",
        "",
        "| page | median | p95 | max |",
        "| --- | --- | --- | --- |",
    ]
    for name, measured in results:
        lines.append("| %s | %.1f ms | %.1f ms | %.1f ms |" % (name, measured["median"], measured["p95"], measured["max"]))
    lines += ["", END]
    bench.write_between_markers(arguments.output, BEGIN, END, lines, "The console at 10 million decisions")


if __name__ == "__main__":
    main()
