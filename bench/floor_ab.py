#!/usr/bin/env python3
"""A/B between builds of the requests bench.py measures against the plain-text floor.

For a change to the gate's path (`GET /v1/gate/verify`, a valid token) or to a forged-token risk query
(`POST /v1/risk/query`, as bench.py's steps send them): the builds alternate, each on a fresh cluster,
and each round measures in 5 s steps, in turn, the plain-text floor, the plain-text route sent the
gate's request headers, the gate and the forged query, with the server's CPU per request. The summary
gives each build's means and their ratios to the floor.

    bench/floor_ab.py --binary A --binary B [--rounds 2] [--steps 3] [--seconds 5] [--perf DIR]

With `--perf DIR`, each round's first steps are profiled (perf's software clock, on the server) into
DIR/ROUND-BUILD-STEP.perf, for `perf report -i`; a profiled step's rate says nothing, so profile in a
run of its own. Nothing is written to the docs: the figures are printed.
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import (App, Cluster, Server, cpu_seconds, forged_query_lines, gate_request_headers, line, mint_ztokens,  # noqa: E402
                   start_devices, write_lines, wrk)

STEPS = ("floor", "headers", "gate", "forged")


def forged_queries(server, app, devices, work):
    """bench.py's forged step, on ztokens minted here."""
    tokens = mint_ztokens(server, app, devices, work, 2000, 8, 3)
    return forged_query_lines(tokens, {"Authorization": app.backend, "Content-Type": "application/json"})


def one_round(binary, steps, seconds, profile):
    work = tempfile.mkdtemp(prefix="gatehouse-gate-ab-")
    os.chmod(work, 0o755)
    cluster = Cluster(work)
    server = None
    try:
        server = Server(binary, cluster, work)
        app = App(server)
        devices = start_devices(server, app)
        headers = gate_request_headers(server, app, devices)
        files = {name: os.path.join(work, name + ".txt") for name in STEPS}
        write_lines(files["forged"], forged_queries(server, app, devices, work))
        write_lines(files["floor"], [line("GET", "/health/live", {})])
        write_lines(files["headers"], [line("GET", "/health/live", headers)])
        write_lines(files["gate"], [line("GET", "/v1/gate/verify", headers)])
        for name in STEPS:  # warm: the gate's first answer verifies the token, the first query loads the policy
            wrk(server.url, [files[name], ""], 32, 1)
        measured = {name: [] for name in STEPS}
        for step in range(steps):
            for name in STEPS:
                profiler = None
                if profile and step == 0:
                    profiler = subprocess.Popen(["perf", "record", "-e", "cpu-clock", "-g", "-p", str(server.process.pid), "-o",
                                                 profile(name), "--", "sleep", str(max(1, seconds - 1))],
                                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
                before = cpu_seconds(server.process.pid)
                result = wrk(server.url, [files[name], ""], 32, seconds)
                if profiler:
                    profiler.wait()
                assert result["non2xx"] == 0 and result["errors"] == 0, "%s: answers not all 2xx: %s" % (name, result)
                result["server_us"] = 1e6 * (cpu_seconds(server.process.pid) - before) / max(1, result["requests"])
                measured[name].append(result)
        return measured
    finally:
        if server:
            server.stop()
        cluster.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", action="append", required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--seconds", type=int, default=5)
    parser.add_argument("--perf", help="a directory for the profiles of each round's first steps")
    arguments = parser.parse_args()
    results = {binary: {name: [] for name in STEPS} for binary in arguments.binary}
    for round_number in range(arguments.rounds):
        for index, binary in enumerate(arguments.binary):
            profile = None
            if arguments.perf:
                os.makedirs(arguments.perf, exist_ok=True)
                profile = lambda name: os.path.join(arguments.perf, "%d-%d-%s.perf" % (round_number + 1, index + 1, name))  # noqa: E731
            measured = one_round(binary, arguments.steps, arguments.seconds, profile)
            for name in STEPS:
                results[binary][name] += measured[name]
            print("round %d %s: %s" % (round_number + 1, binary, "; ".join(
                "%s %s req/s" % (name, ", ".join("%.0f" % step["rate"] for step in measured[name])) for name in STEPS)), flush=True)
    for binary, steps in results.items():
        rate = {name: sum(step["rate"] for step in steps[name]) / len(steps[name]) for name in STEPS}
        cpu = {name: sum(step["server_us"] for step in steps[name]) / len(steps[name]) for name in STEPS}
        p99 = {name: sorted(step["p99_ms"] for step in steps[name])[len(steps[name]) // 2] for name in STEPS}
        print("%s: floor %.0f req/s (%.0f us); %s" % (binary, rate["floor"], cpu["floor"], "; ".join(
            "%s %.0f req/s, %.2fx (%.0f us, median p99 %.2f ms)" % (name, rate[name], rate[name] / rate["floor"], cpu[name], p99[name])
            for name in STEPS[1:])))


if __name__ == "__main__":
    main()
