#!/usr/bin/env python3
"""Purging a day of risk decisions: by rows, and by dropping the day's range (issue 22).

Started by bench/purge, which builds the binary. A throwaway PostgreSQL and Gatehouse against it; one
app's decisions seeded for a day three days ago (--rows, 10 million by default) in that day's range,
as the keeper names it. Risk queries run beside it at a steady pace from a few clients (each issues a
ztoken, then queries with it; only the query is timed), and `gatehouse purge` runs while they do:

  1. baseline: no purge;
  2. by rows: the app keeps decisions 1 day and another app 30, so the day cannot go whole and the
     purger deletes the app's rows in batches (what it did for every app before the partitions);
  3. whole: the other app keeps 1 day too, the seeded rows again, and the purger drops the day.

Prints the purge times and the risk query's latency before and during each, and (unless --smoke)
writes them to docs/PERFORMANCE.md between its markers.

    bench/purge.py --binary PATH [--rows 10000000] [--smoke] [--output docs/PERFORMANCE.md]
"""
import argparse
import datetime
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402

CLIENTS = 4
# Each client's pause between queries: about 4 x 20 = 80 queries a second in all.
PAUSE = 0.05
BEGIN = "<!-- bench/purge writes from here -->"
END = "<!-- bench/purge writes up to here -->"


class Load:
    """Risk queries from CLIENTS threads until stopped; each answer's start and latency."""

    def __init__(self, server, app, devices, backend):
        self.server, self.app, self.devices, self.backend = server, app, devices, backend
        self.samples, self.failures = [], []
        self.stopping = threading.Event()
        self.threads = [threading.Thread(target=self.client, args=(number,), daemon=True) for number in range(CLIENTS)]

    def client(self, number):
        sent = 0
        while not self.stopping.is_set():
            device = (number * 997 + sent) % len(self.devices)
            sent += 1
            body = json.dumps({"deviceId": self.devices[device], "eventId": 3301, "accountId": bench.account(device)}).encode()
            headers = self.app.sdk_headers("POST", "/v1/sdk/ztoken", body)
            headers["X-Forwarded-For"] = bench.address(device)
            status, issued = bench.call(self.server.url + "/v1/sdk/ztoken", "POST", body, headers)
            if status != 200:
                self.failures.append(("ztoken", status))
                continue
            query = {"ztoken": issued["z"], "eventId": 3301, "accountId": bench.account(device), "clientIp": bench.address(device)}
            started = time.monotonic()
            status, decided = bench.call(self.server.url + "/v1/risk/query", "POST", query, self.backend)
            finished = time.monotonic()
            if status != 200 or decided.get("tokenState") != "fresh":
                self.failures.append(("query", status))
            self.samples.append((started, finished))
            time.sleep(PAUSE)

    def __enter__(self):
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *_):
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=30)

    def latency(self, start, end):
        """p50, p99 and max (ms) of the queries that were in flight at some time in [start, end]."""
        during = sorted((finished - started) * 1000 for started, finished in self.samples if finished >= start and started <= end)
        if not during:
            return {"queries": 0, "p50": 0.0, "p99": 0.0, "max": 0.0}
        return {"queries": len(during), "p50": during[len(during) // 2], "p99": during[min(len(during) - 1, int(len(during) * 0.99))],
                "max": during[-1]}


def seed(cluster, app_id, day, rows):
    """`rows` decisions of the app spread over `day`, in the day's range; seconds it took."""
    started = time.monotonic()
    cluster.sql(
        "INSERT INTO risk_decisions (app_id, decision_id, decided_at, event_id, account_id, device_id, token_id, token_state, "
        "client_address, user_agent, page_url, score, decision, tags) "
        "SELECT '%s', gen_random_uuid(), '%s'::timestamptz + (t * 86399.0 / %d) * interval '1 second', 3301, 'account-' || (t %% 5000), "
        "'device-' || (t %% 20000), md5(t::text), 'fresh', '198.51.100.' || (t %% 250), 'okhttp/4.12', NULL, t %% 100, "
        "(ARRAY['pass', 'review', 'reject'])[1 + t %% 3], '[\"device.vpn\"]' FROM generate_series(1, %d) t"
        % (app_id, day.isoformat(), rows, rows))
    cluster.sql("VACUUM ANALYZE risk_decisions")
    cluster.sql("CHECKPOINT")
    return time.monotonic() - started


def purge(server):
    """Runs `gatehouse purge`; (start, end, its report line)."""
    started = time.monotonic()
    output = subprocess.run([server.binary, "purge"], env=server.environment, check=True, capture_output=True, text=True).stdout.strip()
    return started, time.monotonic(), output


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--smoke", action="store_true", help="20,000 rows, nothing written")
    parser.add_argument("--output", default=os.path.join(bench.ROOT, "docs", "PERFORMANCE.md"))
    parser.add_argument("--command", default="bench/purge")
    arguments = parser.parse_args()
    rows = 20_000 if arguments.smoke else arguments.rows
    settle = 2 if arguments.smoke else 10
    work = tempfile.mkdtemp(prefix="gatehouse-purge-")
    os.chmod(work, 0o755)
    cluster = bench.Cluster(work)
    server = None
    try:
        server = bench.Server(arguments.binary, cluster, work)
        app = bench.App(server)
        status, other = server.admin("POST", "/v1/admin/apps", {"name": "Other", "platforms": ["android"]})
        assert status == 201, other
        other_key = other["app"]["appKey"]
        devices = []
        for number in range(64):
            status, started = app.sdk(server, "/v1/sdk/device/start", {"deviceId": "purge-%d" % number, "collectType": 0})
            assert status == 200, started
            devices.append(started["deviceId"])
        backend = {"Authorization": app.backend, "Content-Type": "application/json"}
        app_id = cluster.sql("SELECT app_id FROM apps WHERE app_key = '%s'" % app.key)
        today = datetime.datetime.now(datetime.timezone.utc).replace(hour=0, minute=0, second=0, microsecond=0)
        day = today - datetime.timedelta(days=3)
        name = "risk_decisions_p" + day.strftime("%Y%m%d%H")
        # The day's range as the keeper names and makes it (it keeps only the day before and two ahead).
        cluster.sql("CREATE TABLE %s PARTITION OF risk_decisions FOR VALUES FROM ('%s') TO ('%s')"
                    % (name, day.isoformat(), (day + datetime.timedelta(days=1)).isoformat()))

        def settings(key, days):
            status, body = server.admin("PATCH", "/v1/admin/apps/%s/settings" % key, {"retentionDays": days})
            assert status == 200, body

        def measured_purge(step, before):
            """The clients' latency just before a purge, and while it runs."""
            with Load(server, app, devices, backend) as load:
                time.sleep(settle)
                results[before] = load.latency(time.monotonic() - settle + 1, time.monotonic())
                start, end, report = purge(server)
                time.sleep(1)
            results[step] = dict(load.latency(start, end), seconds=end - start, report=report)
            assert not load.failures, load.failures[:5]
            print("%s: %s" % (step, report), flush=True)

        results = {}
        seeded = seed(cluster, app_id, day, rows)
        print("seeded %d decisions in %.1f s" % (rows, seeded), flush=True)
        settings(app.key, 1)
        settings(other_key, 30)
        measured_purge("rows", "baseline")
        assert cluster.sql("SELECT count(*) FROM %s" % name) == "0", "the rows were not deleted"

        seed(cluster, app_id, day, rows)
        settings(other_key, 1)
        measured_purge("whole", "baseline whole")
        assert cluster.sql("SELECT count(*) FROM pg_class WHERE relname = '%s'" % name) == "0", "the day's range is still there"

        for step in ("baseline", "rows", "baseline whole", "whole"):
            measured = results[step]
            print("%-15s %5d queries  p50 %7.2f ms  p99 %7.2f ms  max %7.2f ms%s" % (
                step, measured["queries"], measured["p50"], measured["p99"], measured["max"],
                "  purge %.2f s" % measured["seconds"] if "seconds" in measured else ""), flush=True)
        if not arguments.smoke:
            write_section(arguments, rows, seeded, results)
    finally:
        if server:
            server.stop()
        cluster.stop()


def write_section(arguments, rows, seeded, results):
    by_rows, whole = results["rows"], results["whole"]

    def row(step, measured, base):
        return "| %s | %s | %d | %.2f / %.2f / %.2f | %.2fx |" % (
            step, "%.2f s" % measured["seconds"] if "seconds" in measured else "", measured["queries"], measured["p50"],
            measured["p99"], measured["max"], measured["p99"] / base["p99"])
    section = """{begin}
## Purging a day of decisions (issue 22)

Measured by `{command}` on {date}, on the machine above (release build): {rows:,} decisions of one app
in one UTC day three days back (seeded in {seeded:.0f} s), while {clients} clients each issue a ztoken
and run a risk query with it every {pause:.0f} ms or so; `gatehouse purge` runs in the middle. By rows:
the app keeps decisions one day and another app thirty, so the day cannot go whole and the purger
deletes the app's rows 1,000 per statement, as it did for every app before the partitions. Whole: the
other app keeps one day too, the same rows again, and the purger drops the day's range. Latency of the
risk queries in flight while the purge ran, against the same clients just before it.

| purge | took | risk queries | p50 / p99 / max (ms) | p99 to before |
| --- | --- | --- | --- | --- |
{before_rows}
{rows_row}
{before_whole}
{whole_row}

Dropping the day took {ratio:.4f}x the time of deleting its rows ({whole_seconds:.2f} s against {by_rows_seconds:.2f} s,
the whole `gatehouse purge` command with its start). Most of a drop's time is PostgreSQL removing the
range's files, which it does after the drop has committed and let go of the table's lock: the risk
queries are held up only while the drop takes the lock and changes the catalog (the max above).
Its reports: by rows "{rows_report}"; whole "{whole_report}".
{end}
""".format(begin=BEGIN, end=END, command=arguments.command + (" --rows %d" % rows if rows != 10_000_000 else ""),
           date=datetime.date.today().isoformat(), rows=rows, seeded=seeded, clients=CLIENTS, pause=PAUSE * 1000,
           before_rows=row("none (before by rows)", results["baseline"], results["baseline"]),
           rows_row=row("by rows", by_rows, results["baseline"]),
           before_whole=row("none (before whole)", results["baseline whole"], results["baseline whole"]),
           whole_row=row("whole (range dropped)", whole, results["baseline whole"]),
           ratio=whole["seconds"] / by_rows["seconds"], by_rows_seconds=by_rows["seconds"], whole_seconds=whole["seconds"],
           rows_report=by_rows["report"], whole_report=whole["report"])
    text = open(arguments.output).read() if os.path.exists(arguments.output) else ""
    if BEGIN in text and END in text:
        text = text[:text.index(BEGIN)] + section.rstrip("\n") + text[text.index(END) + len(END):]
    else:
        text = text.rstrip("\n") + "\n\n" + section
    with open(arguments.output, "w") as handle:
        handle.write(text)


if __name__ == "__main__":
    main()
