#!/usr/bin/env python3
"""What a slider-captcha challenge costs the server, between builds.

`POST /v1/captcha/challenges` needs only an app's public key, so its cost is what anyone can make an
instance spend (within the per-address limit, which an attacker with many addresses divides). Each
build in turn, on a fresh cluster (bench.py's `Cluster` and `Server`, the challenges' limit raised),
answers CHALLENGES challenges one after another on one kept connection, then ten times as many
plain-text probes (`GET /health/live`) as the floor; printed per round and as each build's mean: the server's
CPU a challenge (from /proc), its ratio to a plain-text answer's, the latency's p50 and p99, and the
mean size of the two PNGs.

    bench/captcha_ab.py --binary A [--binary B] [--rounds 2] [--challenges 300]

Nothing is written to the docs: the figures are printed.
"""
import argparse
import base64
import http.client
import json
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import App, Cluster, Server, cpu_seconds  # noqa: E402


def requests(server, count, method, path, body, headers):
    """`count` requests on one connection: (server CPU seconds, sorted latencies in ms, answers' bodies)."""
    host, port = server.url[len("http://"):].split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=30)
    latencies, bodies = [], []
    before = cpu_seconds(server.process.pid)
    for _ in range(count):
        sent = time.monotonic()
        connection.request(method, path, body=body, headers=headers)
        response = connection.getresponse()
        answer = response.read()
        latencies.append((time.monotonic() - sent) * 1000)
        assert response.status == 200, (response.status, answer[:300])
        bodies.append(answer)
    used = cpu_seconds(server.process.pid) - before
    connection.close()
    return used, sorted(latencies), bodies


def one_round(binary, challenges):
    work = tempfile.mkdtemp(prefix="gatehouse-captcha-")
    os.chmod(work, 0o755)
    cluster = Cluster(work)
    server = None
    try:
        os.environ["GATEHOUSE_CAPTCHA_CHALLENGES_PER_MINUTE"] = "1000000"
        server = Server(binary, cluster, work)
        app = App(server)
        body = json.dumps({"appKey": app.key}).encode()
        headers = {"Content-Type": "application/json"}
        requests(server, 20, "POST", "/v1/captcha/challenges", body, headers)  # warm-up
        used, latencies, bodies = requests(server, challenges, "POST", "/v1/captcha/challenges", body, headers)
        floor, _, _ = requests(server, 10 * challenges, "GET", "/health/live", None, {})
        sizes = [0, 0]
        for answer in bodies:
            challenge = json.loads(answer)
            for index, image in enumerate((challenge["background"], challenge["piece"])):
                sizes[index] += len(base64.b64decode(image.split(",", 1)[1]))
        return {"cpu_ms": 1000 * used / challenges, "floor_ms": 1000 * floor / (10 * challenges),
                "p50_ms": latencies[len(latencies) // 2], "p99_ms": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))],
                "background_bytes": sizes[0] / challenges, "piece_bytes": sizes[1] / challenges}
    finally:
        if server:
            server.stop()
        cluster.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", action="append", required=True)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--challenges", type=int, default=300)
    arguments = parser.parse_args()
    results = {binary: [] for binary in arguments.binary}
    for round_number in range(arguments.rounds):
        for binary in arguments.binary:
            result = one_round(binary, arguments.challenges)
            results[binary].append(result)
            print("round %d %s: %.2f ms of server CPU a challenge (%.0fx a plain-text answer's %.3f ms), latency p50 / p99 %.1f / %.1f ms, "
                  "PNGs %.0f + %.0f bytes" % (round_number + 1, binary, result["cpu_ms"], result["cpu_ms"] / result["floor_ms"], result["floor_ms"],
                                              result["p50_ms"], result["p99_ms"], result["background_bytes"], result["piece_bytes"]), flush=True)
    for binary, rounds in results.items():
        def mean(key):
            return sum(result[key] for result in rounds) / len(rounds)
        print("%s: mean %.2f ms of server CPU a challenge (%.0fx a plain-text answer's), p50 %.1f ms, background %.0f bytes, piece %.0f bytes" % (
            binary, mean("cpu_ms"), mean("cpu_ms") / mean("floor_ms"), mean("p50_ms"), mean("background_bytes"), mean("piece_bytes")))


if __name__ == "__main__":
    main()
