#!/usr/bin/env python3
"""Where a risk query's time goes: Gatehouse against PostgreSQL, and PostgreSQL statement by statement.

Starts a cluster with `pg_stat_statements` (and, with `--explain`, `auto_explain` logging the plans of a
few statements in a thousand, with their timings), a release server and bench.py's app and devices, mints
ztokens in an unmeasured run, seeds the history the risk queries' reads are planned against (bench.py's
`seed_old_history`; `--empty-history` leaves it out, as bench.py did before 2026-11-27), vacuums, warms
for a second, and measures the risk query at 32 connections. Printed: the rate, the CPU a query cost the
server and PostgreSQL's backends, and per statement its calls, rows, time in all and a query's share.

    bench/risk_split.py --binary PATH [--seconds 10] [--empty-history] [--explain FILE] [--lone N] [--perf FILE]
                        [--pause-ms N] [--server-log] [--threads]

With `--lone N`, N queries are sent one after another on one connection instead (each waits for the
last's answer, so every batch holds one query): their latency p50 / p90 / p99, and the statements'
times, are what a query costs when nothing queues. With `--perf FILE`, the measured queries are
profiled (perf's software clock, on the server, with call graphs) into FILE, for `perf report -i`.
With `--server-log`, the server logs every request (its access log at `info`, which costs it some CPU)
and the measured queries' own time in the server is printed: its percentiles, and each second's p99,
to tell a tail spread over the run from a few stalls. With `--threads`, the server's CPU and context
switches over the measured queries, by thread (its event loops, Swift's pool, the dispatch manager).
"""
import argparse
import collections
import datetime
import http.client
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import (DEVICES, App, Cluster, Server, cpu_seconds, device_table, machine_cpu, mint_ztokens, risk_query_line,  # noqa: E402
                   seed_old_history, start_devices, stolen_share, write_lines, wrk)


def backends_cpu_seconds():
    """CPU seconds of each PostgreSQL backend and helper process on the machine (titles 'postgres: ...'), by pid."""
    seconds = {}
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open("/proc/%s/cmdline" % pid, "rb") as handle:
                if not handle.read().startswith(b"postgres:"):
                    continue
            with open("/proc/%s/stat" % pid) as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            seconds[pid] = (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
        except OSError:
            pass
    return seconds


def backends_used(before):
    """CPU the backends used since `before`; a process that ended meanwhile (an autovacuum worker) is not counted."""
    return sum(used - before.get(pid, 0.0) for pid, used in backends_cpu_seconds().items())


def with_statistics(cluster, explain):
    bindir = subprocess.run(["pg_config", "--bindir"], check=True, capture_output=True, text=True).stdout.strip()
    cluster.sql("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements', 'auto_explain'")
    owner = ["runuser", "-u", os.environ.get("PG_CLUSTER_USER", "postgres"), "--"] if os.getuid() == 0 else []
    subprocess.run(owner + [os.path.join(bindir, "pg_ctl"), "-D", os.path.join(cluster.directory, "data"), "-l",
                            os.path.join(cluster.directory, "server.log"), "-w", "restart"], check=True, capture_output=True)
    cluster.sql("CREATE EXTENSION pg_stat_statements")
    if explain:
        log_plans(cluster, "0", 0.003)


def log_plans(cluster, slower_than, sample_rate):
    """auto_explain (loaded by `with_statistics`) logs the plans, with their buffers, of a `sample_rate`
    share of the statements slower than `slower_than` ("0", "2ms")."""
    for setting in ("log_min_duration = '%s'" % slower_than, "log_analyze = on", "log_buffers = on", "sample_rate = %s" % sample_rate):
        cluster.sql("ALTER SYSTEM SET auto_explain." + setting)
    cluster.sql("SELECT pg_reload_conf()")


def percentile(ordered, share):
    """The value `share` of the way through `ordered` (sorted, not empty)."""
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def lone_queries(server, lines):
    """The queries of `lines` (bench.py's request lines), one at a time on one kept connection."""
    host, port = server.url[len("http://"):].split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    latencies, failures, started = [], 0, time.monotonic()
    for text in lines:
        method, path, headers, body = text.split("\t")
        sent = time.monotonic()
        connection.request(method, path, body=body.encode(), headers=dict(header.split(": ", 1) for header in headers.split("\x1f")))
        response = connection.getresponse()
        response.read()
        latencies.append((time.monotonic() - sent) * 1000)
        failures += not 200 <= response.status < 300
    ordered = sorted(latencies)
    return {"requests": len(lines), "rate": len(lines) / (time.monotonic() - started), "non2xx": failures,
            "p50_ms": percentile(ordered, 0.5), "p90_ms": percentile(ordered, 0.9), "p99_ms": percentile(ordered, 0.99)}


def server_times(log_path, since):
    """The risk queries' own times in the server (its access log), by the second they were logged in,
    from the first whole second after `since` (Unix time; the warm-up's queries come before it):
    {second: [ms, ...]}."""
    seconds = collections.defaultdict(list)
    with open(log_path) as log:
        for line in log:
            found = re.search(r"duration_ms=([0-9.]+)", line)
            if not found or "route=/v1/risk/query" not in line:
                continue
            second = datetime.datetime.strptime(line.split(" ", 1)[0], "%Y-%m-%dT%H:%M:%S%z").timestamp()
            if second > since:
                seconds[second].append(float(found.group(1)))
    return seconds


def print_server_times(seconds):
    every = sorted(took for times in seconds.values() for took in times)
    if not every:
        print("no risk query in the server's log")
        return
    # Each second's p99 leaves out the last second (partial) and the first (the warm-up's last answers may
    # be logged in it).
    p99s = sorted(percentile(sorted(seconds[second]), 0.99) for second in sorted(seconds)[1:-1])
    each = ("each whole second's p99 from %.2f to %.2f ms (median %.2f), over 10 ms in %d of %d seconds" % (
        p99s[0], p99s[-1], p99s[len(p99s) // 2], sum(p99 > 10 for p99 in p99s), len(p99s))) if p99s else "too short a run for each second's p99"
    print("in the server: %d queries, p50 / p90 / p99 / p99.9 %.2f / %.2f / %.2f / %.2f ms; %s" % (
        len(every), percentile(every, 0.5), percentile(every, 0.9), percentile(every, 0.99), percentile(every, 0.999), each))


def threads(pid):
    """Each of the process's threads by name: CPU ticks, voluntary and involuntary context switches."""
    counts = collections.defaultdict(lambda: [0, 0, 0])
    for thread in os.listdir("/proc/%d/task" % pid):
        try:
            with open("/proc/%d/task/%s/comm" % (pid, thread)) as handle:
                name = handle.read().strip()
            with open("/proc/%d/task/%s/stat" % (pid, thread)) as handle:
                fields = handle.read().rsplit(")", 1)[1].split()
            with open("/proc/%d/task/%s/status" % (pid, thread)) as handle:
                status = dict(line.split(":", 1) for line in handle.read().splitlines() if ":" in line)
        except OSError:
            continue
        counts[name][0] += int(fields[11]) + int(fields[12])
        counts[name][1] += int(status["voluntary_ctxt_switches"])
        counts[name][2] += int(status["nonvoluntary_ctxt_switches"])
    return counts


def print_threads(before, after, queries):
    """What each kind of thread spent over the measured queries (threads that ended meanwhile are left out)."""
    tick = 1e6 / os.sysconf("SC_CLK_TCK")
    rows = {name: [now - was for now, was in zip(counts, before.get(name, [0, 0, 0]))] for name, counts in after.items()}
    for name, (ticks, voluntary, involuntary) in sorted(rows.items(), key=lambda row: -row[1][0]):
        if ticks or voluntary:
            print("thread %-18s %6.0f us of CPU, %5.2f voluntary and %5.2f involuntary switches a query" % (
                name, ticks * tick / queries, voluntary / queries, involuntary / queries))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--empty-history", action="store_true")
    parser.add_argument("--explain", help="copy PostgreSQL's log, with the sampled plans, to this file")
    parser.add_argument("--lone", type=int, help="send this many queries one at a time instead")
    parser.add_argument("--perf", help="profile the server while the queries are measured, into this file")
    parser.add_argument("--pause-ms", type=int, default=0, help="each connection pauses this long on average between queries (bench.py's paced step)")
    parser.add_argument("--server-log", action="store_true", help="the measured queries' own times in the server, from its access log")
    parser.add_argument("--threads", action="store_true", help="the server's CPU and context switches by thread")
    arguments = parser.parse_args()
    work = tempfile.mkdtemp(prefix="gatehouse-split-")
    os.chmod(work, 0o755)
    cluster = Cluster(work)
    server = None
    try:
        with_statistics(cluster, arguments.explain)
        server = Server(arguments.binary, cluster, work, "info" if arguments.server_log else "error")
        app = App(server)
        devices = start_devices(server, app)
        numbers = {device: number for number, device in enumerate(devices)}
        tokens = mint_ztokens(server, app, devices, work, 10000 * arguments.seconds, 32, 2 * arguments.seconds + 2)
        app_id = cluster.sql("SELECT app_id FROM apps WHERE app_key = '%s'" % app.key)
        device_table(cluster, "split_devices", devices)
        if not arguments.empty_history:
            seed_old_history(cluster, app_id, "split_devices", 360000)
        cluster.sql("VACUUM ANALYZE")
        cluster.sql("CHECKPOINT")
        backend = {"Authorization": app.backend, "Content-Type": "application/json"}
        warm, measured = os.path.join(work, "warm.txt"), os.path.join(work, "query.txt")
        write_lines(warm, [risk_query_line(backend, numbers, token) for token in tokens[:2000]])
        write_lines(measured, [risk_query_line(backend, numbers, token) for token in tokens[2000:]])
        wrk(server.url, [warm, ""], 32, 1)
        cluster.sql("SELECT pg_stat_statements_reset()")
        profiler = None
        if arguments.perf:
            profiler = subprocess.Popen(["perf", "record", "-e", "cpu-clock", "-g", "-p", str(server.process.pid), "-o", arguments.perf],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(0.5)
        server_before, backends_before, machine_before = cpu_seconds(server.process.pid), backends_cpu_seconds(), machine_cpu()
        threads_before, measured_from = threads(server.process.pid), time.time()
        if arguments.lone:
            result = lone_queries(server, [risk_query_line(backend, numbers, token) for token in tokens[2000:2000 + arguments.lone]])
        else:
            result = wrk(server.url, [measured, ""], 32, arguments.seconds, arguments.pause_ms)
        threads_after = threads(server.process.pid)
        if profiler:
            profiler.send_signal(signal.SIGINT)
            profiler.wait()
        queries = max(1, result["requests"])
        assert result["non2xx"] == 0 and queries < len(tokens) - 2000, "answers not all 2xx, or tokens ran out: %s" % result
        # wrk's summary has no p90: it is printed for the lone queries only.
        print("risk query %.0f req/s, latency p50 / p90 / p99 %.2f / %s / %.2f ms (%s devices, %s); a query cost the server %.0f us of CPU, "
              "PostgreSQL's processes %.0f us (those alive at the end); %.0f%% of the machine's CPU stolen" % (
            result["rate"], result["p50_ms"], "%.2f" % result["p90_ms"] if arguments.lone else "-", result["p99_ms"], DEVICES,
            "history left empty" if arguments.empty_history else "old history seeded",
            1e6 * (cpu_seconds(server.process.pid) - server_before) / queries, 1e6 * backends_used(backends_before) / queries,
            100 * stolen_share(machine_before, machine_cpu())))
        print("calls | rows | ms in all | us a query | ms a call: mean, stddev, max | statement")
        print(cluster.sql(
            "SELECT calls || ' | ' || rows || ' | ' || round(total_exec_time::numeric, 1) || ' | ' || round((total_exec_time * 1000 / %d)::numeric, 1)"
            " || ' | ' || round(mean_exec_time::numeric, 3) || ', ' || round(stddev_exec_time::numeric, 3) || ', ' || round(max_exec_time::numeric, 3)"
            " || ' | ' || left(regexp_replace(query, '\\s+', ' ', 'g'), 90)"
            " FROM pg_stat_statements WHERE calls > 10 ORDER BY total_exec_time DESC LIMIT 6" % queries))
        if arguments.threads:
            print_threads(threads_before, threads_after, queries)
        if arguments.server_log:
            print_server_times(server_times(server.log_path, measured_from))
    finally:
        if server:
            server.stop()
        if arguments.explain:
            shutil.copy(os.path.join(cluster.directory, "server.log"), arguments.explain)
        cluster.stop()


if __name__ == "__main__":
    main()
