#!/usr/bin/env python3
"""A replay of a million stored decisions (issue 32).

Started by bench/replay, which builds the binary. A throwaway PostgreSQL and Gatehouse against it;
an app with a deny list and a few policy rules; 40 devices of kinds a fraud team meets (clean, VPN,
simulator, a watched account, a busy address) each make a real risk query, so that their decisions
carry the facts the server stores; then those decisions are copied in SQL to --rows (a million by
default) over today's range, one in fifty labelled fraud and one in fifty legitimate. Measured:

  - the bytes the stored facts cost a decision (their average, and a decision's row with and without);
  - a replay of the whole window with the current policy and a proposed rule, from the POST that
    starts it to the GET that says it completed, with the server's resident memory sampled every
    50 ms during (the issue's bounds: at most 60 s and under 200 MiB with the release build).

Prints the figures and (unless --smoke) writes them to docs/PERFORMANCE.md between its markers.

    bench/replay.py --binary PATH [--rows 1000000] [--smoke] [--output docs/PERFORMANCE.md]
"""
import argparse
import base64
import datetime
import json
import os
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402

BEGIN = "<!-- bench/replay writes from here -->"
END = "<!-- bench/replay writes up to here -->"
BOUND_SECONDS = 60
BOUND_MIB = 200
DEVICES = 40


def real_decisions(server, app):
    """One real risk query from each of DEVICES devices of several kinds; returns their outcomes."""
    backend = {"Authorization": app.backend}
    outcomes = []
    for number in range(DEVICES):
        kind = number % 5
        collect = {"deviceId": "replay-%d" % number, "collectType": 0, "platform": "android" if number % 2 else "ios"}
        if kind == 1:
            collect["environment"] = {"vpn": True}
        if kind == 2:
            collect["environment"] = {"simulator": True, "hooking": True}
        status, started = app.sdk(server, "/v1/sdk/device/start", collect)
        assert status == 200, started
        account = "watch-%d" % number if kind == 3 else "shopper-%d" % number
        status, issued = app.sdk(server, "/v1/sdk/ztoken", {"deviceId": started["deviceId"], "eventId": 3301, "accountId": account})
        assert status == 200, issued
        address = "203.0.113.%d" % (1 + number % 3) if kind == 4 else "198.51.100.%d" % number
        body = {"ztoken": issued["z"], "eventId": 3301, "accountId": account, "clientIp": address, "userAgent": "shop/2.1"}
        status, decision = bench.call(server.url + "/v1/risk/query", "POST", body, backend)
        assert status == 200, decision
        outcomes.append(decision["decision"])
    return outcomes


def copy_decisions(cluster, app_id, rows):
    """The real decisions copied to `rows` over today's range so far; seconds it took."""
    started = time.monotonic()
    now = datetime.datetime.now(datetime.timezone.utc)
    midnight = now.replace(hour=0, minute=0, second=0, microsecond=0)
    span = max(60.0, (now - midnight).total_seconds() - 120)
    copies = max(1, rows // DEVICES)
    cluster.sql(
        "INSERT INTO risk_decisions (app_id, decision_id, decided_at, event_id, account_id, device_id, token_id, token_state, "
        "client_address, user_agent, page_url, score, decision, tags, rule_outcomes, policy_version, facts, label, label_kind, "
        "labelled_by, labelled_at, label_count) "
        "SELECT app_id, gen_random_uuid(), now() - interval '60 seconds' - (t * %(span)f / %(copies)d) * interval '1 second', event_id, "
        "account_id, device_id, md5(t::text || decision_id::text), token_state, client_address, user_agent, page_url, score, decision, "
        "tags, rule_outcomes, policy_version, facts, "
        "CASE WHEN t %% 50 = 0 THEN 'fraud' WHEN t %% 50 = 1 THEN 'legitimate' END, "
        "CASE WHEN t %% 50 < 2 THEN 'other' END, CASE WHEN t %% 50 < 2 THEN 'bench' END, CASE WHEN t %% 50 < 2 THEN now() END, "
        "CASE WHEN t %% 50 < 2 THEN 1 ELSE 0 END "
        "FROM risk_decisions CROSS JOIN generate_series(1, %(copies)d) AS t WHERE app_id = '%(app)s'"
        % {"app": app_id, "span": span, "copies": copies})
    cluster.sql("VACUUM ANALYZE risk_decisions")
    cluster.sql("CHECKPOINT")
    return time.monotonic() - started


def sizes(cluster, app_id):
    """Average bytes of the stored facts, and of a decision's row with them and without."""
    row = cluster.sql(
        "SELECT round(avg(octet_length(facts)), 1) || ' ' || round(avg(pg_column_size(d.*)), 1) || ' ' || "
        "round(avg(pg_column_size(d.*) - coalesce(pg_column_size(facts), 0)), 1) FROM risk_decisions AS d WHERE app_id = '%s'" % app_id)
    facts, with_facts, without = (float(value) for value in row.split())
    return facts, with_facts, without


class MemorySampler(threading.Thread):
    """The server's resident memory every 50 ms, its highest kept."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.peak_kib, self.running = pid, 0, True

    def run(self):
        while self.running:
            self.peak_kib = max(self.peak_kib, bench.rss_kib(self.pid)[0])
            time.sleep(0.05)


def replay(server, app, proposal):
    """Starts the replay and polls it until it ends; its final state and the seconds it took."""
    path = "/v1/admin/apps/%s/risk/replays" % app.key
    started = time.monotonic()
    status, run = server.admin("POST", path, proposal)
    assert status == 202, run
    while run["status"] == "running":
        time.sleep(0.1)
        status, run = server.admin("GET", "%s/%s" % (path, run["replayId"]))
        assert status == 200, run
    return run, time.monotonic() - started


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--smoke", action="store_true", help="20,000 rows, nothing written, no bound")
    parser.add_argument("--output", default=os.path.join(bench.ROOT, "docs", "PERFORMANCE.md"))
    parser.add_argument("--command", default="bench/replay")
    arguments = parser.parse_args()
    rows = 20_000 if arguments.smoke else arguments.rows
    work = tempfile.mkdtemp(prefix="gatehouse-replay-")
    os.chmod(work, 0o755)
    cluster = bench.Cluster(work)
    server = None
    try:
        server = bench.Server(arguments.binary, cluster, work)
        app = bench.App(server)
        risk = "/v1/admin/apps/%s/risk" % app.key
        assert server.admin("POST", risk + "/lists", {"list": "deny", "type": "cidr", "value": "203.0.113.0/30"})[0] == 201
        for name, rule in (
            ("watched-account", {"when": "account.startsWith('watch-')", "then": {"decide": "review"}}),
            ("simulator-hooking", {"when": "device.signals.simulator && device.signals.hooking", "then": {"tag": "rule.sim_hook", "weight": 30}}),
            ("vpn-monitor", {"when": "device.signals.vpn", "then": {"decide": "reject"}, "mode": "monitor"}),
        ):
            assert server.admin("PUT", "%s/policy-rules/%s" % (risk, name), rule)[0] == 200
        outcomes = real_decisions(server, app)
        app_id = cluster.sql("SELECT app_id FROM apps WHERE app_key = '%s'" % app.key)
        copied = copy_decisions(cluster, app_id, rows)
        stored = int(cluster.sql("SELECT count(*) FROM risk_decisions WHERE app_id = '%s'" % app_id))
        facts_bytes, with_facts, without = sizes(cluster, app_id)
        print("%d decisions stored (%s from the real queries) in %.1f s; facts %.1f bytes, a row %.1f bytes with them, %.1f without"
              % (stored, ", ".join(sorted(set(outcomes))), copied, facts_bytes, with_facts, without), flush=True)
        proposal = {
            "from": (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(days=1)).isoformat(),
            "to": (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=1)).isoformat(),
            "policyRules": [
                {"name": "watched-account", "when": "account.startsWith('watch-')", "then": {"decide": "review"}},
                {"name": "simulator-hooking", "when": "device.signals.simulator && device.signals.hooking",
                 "then": {"tag": "rule.sim_hook", "weight": 30}},
                {"name": "vpn", "when": "device.signals.vpn", "then": {"decide": "reject"}},
            ],
        }
        idle_kib = bench.rss_kib(server.process.pid)[0]
        sampler = MemorySampler(server.process.pid)
        sampler.start()
        run, seconds = replay(server, app, proposal)
        sampler.running = False
        sampler.join()
        report = run.get("report") or {}
        assert run["status"] == "completed" and report.get("replayed", 0) + report.get("withoutFacts", 0) == stored, run
        peak_mib = sampler.peak_kib / 1024
        print("replayed %d decisions in %.1f s (%.0f a second), %d changed; server resident memory %.0f MiB before, %.0f MiB at most during"
              % (report["replayed"], seconds, report["replayed"] / seconds, report["changed"], idle_kib / 1024, peak_mib), flush=True)
        if not arguments.smoke:
            write_section(arguments, stored, copied, (facts_bytes, with_facts, without), run, seconds, idle_kib / 1024, peak_mib)
            if seconds > BOUND_SECONDS or peak_mib >= BOUND_MIB:
                raise SystemExit("over the bound: %.1f s (at most %d), %.0f MiB (under %d)" % (seconds, BOUND_SECONDS, peak_mib, BOUND_MIB))
    finally:
        if server:
            server.stop()
        cluster.stop()


def write_section(arguments, stored, copied, sizes_, run, seconds, idle_mib, peak_mib):
    report = run["report"]
    facts_bytes, with_facts, without = sizes_
    cells = {(cell["before"], cell["after"]): cell["count"] for cell in report["matrix"]}
    lines = [
        BEGIN,
        "",
        "`%s` (%s), release build: %s decisions of one app (40 real risk queries copied in SQL, one in fifty labelled fraud and one"
        % (arguments.command, datetime.date.today().isoformat(), "{:,}".format(stored)),
        "in fifty legitimate) replayed with the current version and three proposed rules, from the POST that starts it to the GET",
        "that says it completed, the server's resident memory sampled every 50 ms:",
        "",
        "| measure | value | bound |",
        "| --- | --- | --- |",
        "| replay of %s decisions | %.1f s (%.0f a second) | at most %d s |" % ("{:,}".format(report["replayed"]), seconds,
                                                                             report["replayed"] / seconds, BOUND_SECONDS),
        "| server resident memory, before / at most during | %.0f MiB / %.0f MiB | under %d MiB |" % (idle_mib, peak_mib, BOUND_MIB),
        "| stored facts a decision | %.1f bytes | |" % facts_bytes,
        "| a decision's row, with its facts / without | %.1f / %.1f bytes (+%.0f%%) | |" % (with_facts, without, (with_facts / without - 1) * 100),
        "| decisions changed | %s (pass to review %s, pass to reject %s, review to reject %s) | |" % (
            "{:,}".format(report["changed"]), "{:,}".format(cells.get(("pass", "review"), 0)), "{:,}".format(cells.get(("pass", "reject"), 0)),
            "{:,}".format(cells.get(("review", "reject"), 0))),
        "",
        END,
    ]
    bench.write_between_markers(arguments.output, BEGIN, END, lines, "A replay of a million decisions (issue 32)")


if __name__ == "__main__":
    main()
