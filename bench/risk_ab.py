#!/usr/bin/env python3
"""A/B of the risk query between builds: each build in turn, on a fresh cluster, as bench.py seeds it.

For a change to the risk query's path whose effect is smaller than this machine's noise between two
`bench/run`s (a third, step to step): the builds alternate, each round measures the plain-text floor
and then the risk query in 5 s steps, and the summary compares the means of the rate against the floor,
and the CPU a query cost the server and the whole machine (PostgreSQL and wrk included).

    bench/risk_ab.py --binary A --binary B [--rounds 2] [--steps 2] [--seconds 5] [--paced]
    bench/risk_ab.py --binary A --binary B --interleaved PAIRS --pause-ms N [--seconds 5]

The CPU the hypervisor gives other guests moves from none to half of it within minutes, and a tail
latency triples with a fifth gone, more than any change to the path moves it: a round of one build
and a round of the other a minute apart compare machines, not builds. With `--interleaved`, both
builds run at once, each on its own cluster (set up as a round is), and their risk queries are paced
(`--pause-ms`, the same rate for both) in steps that alternate A B B A, so that each pair of steps
shares the machine's conditions; printed: each step's p50, p99 and CPU stolen, and each build's
median over the steps, and over those with at most 2% stolen.

Each round starts its own cluster and server (bench.py's `Cluster` and `Server`), 256 devices, mints
ztokens for its steps in an unmeasured run, stores 360,000 consumptions and the velocity pairs they left,
two days old, spread over the devices (bench.py's `seed_old_history`, as before its risk query: without
them, the batches' connections plan the read against empty statistics), and vacuums. Nothing is written to the docs: the figures are printed.
"""
import argparse
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import (App, Cluster, Server, cpu_seconds, cpu_ticks, device_table, line, mint_ztokens, risk_query_line,  # noqa: E402
                   seed_old_history, start_devices, write_lines, wrk)


def machine_busy():
    """Busy and total ticks of the whole machine: idle, iowait and what the hypervisor gave other
    guests are not this machine's work."""
    ticks = cpu_ticks()
    return sum(ticks) - ticks[3] - ticks[4] - ticks[7], sum(ticks)


def measure(server, path, seconds):
    server_before, (busy_before, _) = cpu_seconds(server.process.pid), machine_busy()
    result = wrk(server.url, [path, ""], 32, seconds)
    busy_after, _ = machine_busy()
    requests = max(1, result["requests"])
    result["server_us"] = 1e6 * (cpu_seconds(server.process.pid) - server_before) / requests
    result["machine_us"] = 1e6 * (busy_after - busy_before) / os.sysconf("SC_CLK_TCK") / requests
    return result


def prepare(binary, tokens_for_seconds):
    """A cluster and a server for `binary`, seeded as a round is, with ztokens minted for
    `tokens_for_seconds` of issuance: (cluster, server, work, tokens, request line of a token)."""
    work = tempfile.mkdtemp(prefix="gatehouse-ab-")
    os.chmod(work, 0o755)
    cluster = Cluster(work)
    server = None
    try:
        server = Server(binary, cluster, work)
        app = App(server)
        devices = start_devices(server, app)
        numbers = {device: number for number, device in enumerate(devices)}
        tokens = mint_ztokens(server, app, devices, work, 150000, 32, tokens_for_seconds)
        app_id = cluster.sql("SELECT app_id FROM apps WHERE app_key = '%s'" % app.key)
        device_table(cluster, "ab_devices", devices)
        seed_old_history(cluster, app_id, "ab_devices", 360000)
        cluster.sql("VACUUM ANALYZE")
        cluster.sql("CHECKPOINT")
        backend = {"Authorization": app.backend, "Content-Type": "application/json"}
        return cluster, server, work, tokens, lambda token: risk_query_line(backend, numbers, token)
    except BaseException:
        if server:
            server.stop()
        cluster.stop()
        raise


def one_round(binary, steps, seconds, paced):
    cluster, server, work, tokens, query = prepare(binary, 5 * steps * seconds)
    try:
        write_lines(os.path.join(work, "live.txt"), [line("GET", "/health/live", {})])
        floor = measure(server, os.path.join(work, "live.txt"), seconds)
        share = len(tokens) // (steps + 1 if paced else steps)
        measured = []
        for step in range(steps):
            path = os.path.join(work, "query-%d.txt" % step)
            write_lines(path, [query(token) for token in tokens[step * share:(step + 1) * share]])
            result = measure(server, path, seconds)
            assert result["non2xx"] == 0 and result["requests"] < share, "answers not all 2xx, or tokens ran out: %s" % result
            measured.append(result)
            time.sleep(1)
        if paced:
            # As bench.py's paced step: each connection pauses so that the rate is at most half the peak.
            path = os.path.join(work, "query-paced.txt")
            write_lines(path, [query(token) for token in tokens[steps * share:]])
            peak = sum(step["rate"] for step in measured) / len(measured)
            result = wrk(server.url, [path, ""], 32, seconds, max(1, round(1000 * 32 / (peak / 2))))
            assert result["non2xx"] == 0, "paced answers not all 2xx: %s" % result
            return floor, measured, result
        return floor, measured, None
    finally:
        server.stop()
        cluster.stop()


def interleaved(binaries, pairs, seconds, pause_ms):
    """Both builds at once, their paced steps alternating A B B A (see the docstring)."""
    # Enough ztokens for every step at up to twice the pace's rate; issuance runs at about 1,600 a second.
    rate = 1000 * 32 / pause_ms
    mint_seconds = max(10, round(2 * rate * seconds * pairs / 1600))
    prepared = {}
    try:
        for binary in binaries:
            prepared[binary] = prepare(binary, mint_seconds)
        steps = {binary: [] for binary in binaries}
        order = [binaries[index] for pair in range(pairs) for index in ((0, 1) if pair % 2 == 0 else (1, 0))]
        for number, binary in enumerate(order):
            cluster, server, work, tokens, query = prepared[binary]
            # Each step its own share of the build's tokens, as a round's steps have: wrk's two threads
            # send from the share's lines in turn, so the next step cannot start where this one stopped.
            share = len(tokens) // pairs
            taken = len(steps[binary])
            path = os.path.join(work, "paced-%d.txt" % number)
            write_lines(path, [query(token) for token in tokens[taken * share:(taken + 1) * share]])
            server_before = cpu_seconds(server.process.pid)
            result = wrk(server.url, [path, ""], 32, seconds, pause_ms)
            assert result["non2xx"] == 0 and result["requests"] < share, "answers not all 2xx, or tokens ran out: %s" % result
            result["server_us"] = 1e6 * (cpu_seconds(server.process.pid) - server_before) / max(1, result["requests"])
            steps[binary].append(result)
            print("step %d %s: %.0f req/s, p50 %.2f ms, p99 %.2f ms, server %.0f us a query, %.0f%% stolen" % (
                number + 1, binary, result["rate"], result["p50_ms"], result["p99_ms"], result["server_us"], 100 * result["stolen"]), flush=True)
            time.sleep(1)

        def median(values):
            values = sorted(values)
            return values[len(values) // 2] if values else float("nan")

        for binary in binaries:
            quiet = [step for step in steps[binary] if step["stolen"] <= 0.02]
            print("%s: median over %d steps p50 %.2f ms, p99 %.2f ms, server %.0f us a query; over the %d with at most 2%% stolen "
                  "p50 %.2f ms, p99 %.2f ms" % (
                      binary, len(steps[binary]), median([step["p50_ms"] for step in steps[binary]]),
                      median([step["p99_ms"] for step in steps[binary]]), median([step["server_us"] for step in steps[binary]]),
                      len(quiet), median([step["p50_ms"] for step in quiet]), median([step["p99_ms"] for step in quiet])))
    finally:
        for cluster, server, *_ in prepared.values():
            server.stop()
            cluster.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", action="append", required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--paced", action="store_true", help="after the steps, one step paced to half their rate: its p50 and p99")
    parser.add_argument("--interleaved", type=int, metavar="PAIRS", help="both builds at once, this many pairs of paced steps (A B B A)")
    parser.add_argument("--pause-ms", type=int, default=26, help="with --interleaved: each connection's mean pause between queries")
    arguments = parser.parse_args()
    if arguments.interleaved:
        assert len(arguments.binary) == 2, "--interleaved compares two builds"
        interleaved(arguments.binary, arguments.interleaved, arguments.seconds, arguments.pause_ms)
        return
    results = {binary: [] for binary in arguments.binary}
    for round_number in range(arguments.rounds):
        for binary in arguments.binary:
            floor, steps, paced = one_round(binary, arguments.steps, arguments.seconds, arguments.paced)
            results[binary].append((floor, steps, paced))
            print("round %d %s: floor %.0f req/s; risk query %s" % (
                round_number + 1, binary, floor["rate"], ", ".join(
                    "%.0f req/s (server %.0f us, machine %.0f us a query, %.0f%% stolen)" % (
                        step["rate"], step["server_us"], step["machine_us"], 100 * step["stolen"])
                    for step in steps) + ("; paced %.0f req/s, p50 %.2f ms, p99 %.2f ms, %.0f%% stolen" % (
                        paced["rate"], paced["p50_ms"], paced["p99_ms"], 100 * paced["stolen"]) if paced else "")), flush=True)
    for binary, rounds in results.items():
        steps = [step for _, measured, _ in rounds for step in measured]
        rate = sum(step["rate"] for step in steps) / len(steps)
        floor = sum(floor["rate"] for floor, _, _ in rounds) / len(rounds)
        print("%s: risk query %.0f req/s, %.4f of the floor (%.0f req/s); server %.0f us, machine %.0f us a query" % (
            binary, rate, rate / floor, floor, sum(step["server_us"] for step in steps) / len(steps),
            sum(step["machine_us"] for step in steps) / len(steps)))
        if arguments.paced:
            paced = [paced for _, _, paced in rounds]
            print("%s: paced to half, p50 %s ms, p99 %s ms, CPU stolen %s" % (
                binary, ", ".join("%.2f" % step["p50_ms"] for step in paced), ", ".join("%.2f" % step["p99_ms"] for step in paced),
                ", ".join("%.0f%%" % (100 * step["stolen"]) for step in paced)))


if __name__ == "__main__":
    main()
