#!/usr/bin/env python3
"""bench.py's history-growth step alone, on a fresh cluster and server: the risk query's latency with an
attack's history in its windows, at the levels given (rows, increasing).

    bench/history.py --binary PATH [--levels 0,100000,1000000] [--explain 2ms]

With `--explain`, PostgreSQL's auto_explain logs the plan of every statement slower than that
(with its buffers; `risk_split.log_plans`) into the cluster's log, copied to the working directory
printed at the end.
Nothing is written to the docs: the figures are printed.
"""
import argparse
import os
import shutil
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import App, Cluster, Server, history_growth, start_devices  # noqa: E402
from risk_split import log_plans, with_statistics  # noqa: E402


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", required=True)
    parser.add_argument("--levels", default="0,100000,1000000")
    parser.add_argument("--explain", help="log the plans of statements slower than this (auto_explain)")
    arguments = parser.parse_args()
    work = tempfile.mkdtemp(prefix="gatehouse-history-")
    os.chmod(work, 0o755)
    cluster = Cluster(work)
    server = None
    try:
        if arguments.explain:
            with_statistics(cluster, None)
            log_plans(cluster, arguments.explain, 1)
        server = Server(arguments.binary, cluster, work)
        app = App(server)
        devices = start_devices(server, app)
        backend = {"Authorization": app.backend, "Content-Type": "application/json"}
        history_growth(server, cluster, app, devices, backend, False, [int(level) for level in arguments.levels.split(",")])
    finally:
        if server:
            server.stop()
        if arguments.explain:
            shutil.copy(os.path.join(cluster.directory, "server.log"), os.path.join(work, "postgres.log"))
            print("plans: %s" % os.path.join(work, "postgres.log"))
        cluster.stop()


if __name__ == "__main__":
    main()
