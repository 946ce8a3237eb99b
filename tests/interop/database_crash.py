#!/usr/bin/env python3
"""A database that crashes under load, thirty times: every request is answered, and the instance
recovers by itself.

Starts its own PostgreSQL 15 cluster and one `gatehouse serve` against it, keeps eight clients
busy (SDK device start, ztoken issuance and the token's risk query, which go through the group
commits, backend reads and operator writes), and stops the cluster with `pg_ctl stop -m immediate` and starts it again thirty
times. Asserted:

- no request is left unanswered (each client waits at most 30 s; the bound under test is the
  database timeout, here 3 s), no answer is a 500, and every 503 carries Retry-After;
- during one longer outage /health/ready says 503 within 2 s of the crash, and answers within 2 s
  every time it is asked;
- after the last cycle the same instance (no restart) becomes ready and serves 20 of 20 new SDK
  requests and 20 of 20 operator writes (at most 2 of them after one retry of a 503 with Retry-After:
  a pooled connection that died with the database may be found dead only by the request that takes it);
- a fresh token's risk query waiting for its batch when SIGTERM comes is answered, then the instance
  exits 0.

    database_crash.py --binary .build/debug/gatehouse [--cycles 30]
"""
import argparse
import base64
import http.client
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
from sdk_sign import sign  # noqa: E402
from interop_common import CLIENT_WAIT, ClientThreads, check, finish, free_port, request, stop_process  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))




class Cluster:
    def __init__(self, folder):
        self.folder = folder
        self.port = free_port()
        self.bindir = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=True).stdout.strip()
        self.url = subprocess.run(
            [os.path.join(ROOT, "scripts", "pg-cluster.sh"), "start", folder, str(self.port)], capture_output=True, text=True, check=True
        ).stdout.strip()

    def pg_ctl(self, *args):
        command = [os.path.join(self.bindir, "pg_ctl"), "-D", os.path.join(self.folder, "data"), *args]
        if os.getuid() == 0:
            command = ["runuser", "-u", os.environ.get("PG_CLUSTER_USER", "postgres"), "--"] + command
        subprocess.run(command, capture_output=True, check=True)

    def crash(self):
        self.pg_ctl("-m", "immediate", "stop")

    def start(self):
        self.pg_ctl(
            "-l", os.path.join(self.folder, "server.log"), "-w", "-o",
            f"-p {self.port} -k {self.folder} -c listen_addresses=127.0.0.1 -c max_connections=200 -c fsync=off", "start",
        )

    def stop(self):
        subprocess.run([os.path.join(ROOT, "scripts", "pg-cluster.sh"), "stop", self.folder], capture_output=True)


class Load(ClientThreads):
    """Eight clients, each looping over a mix of requests; every answer is recorded."""

    def __init__(self, base, admin, app):
        super().__init__(8, CLIENT_WAIT)
        self.base, self.admin, self.app = base, admin, app

    def sdk(self, path, body):
        raw = json.dumps(body).encode()
        headers = sign(self.app["appKey"], self.app["secretKey"], "POST", path, raw)
        headers["Content-Type"] = "application/json"
        call = urllib.request.Request(self.base + path, data=raw, method="POST", headers=headers)
        started = time.monotonic()
        try:
            with urllib.request.urlopen(call, timeout=CLIENT_WAIT) as response:
                return response.status, dict(response.headers), time.monotonic() - started, response.read()
        except urllib.error.HTTPError as error:
            return error.code, dict(error.headers), time.monotonic() - started, error.read()
        except (TimeoutError, socket.timeout):
            return 0, {}, time.monotonic() - started, b""
        except (urllib.error.URLError, ConnectionError) as error:
            return -1, {}, time.monotonic() - started, str(error).encode()

    def backend(self):
        return "Basic " + base64.b64encode(f"{self.app['appKey']}:{self.app['serverSecret']}".encode()).decode()

    def risk_query(self, query):
        """As `request`, but without `Connection: close` (urllib sends it), which keeps a query off the
        event loop's answers: a backend's client keeps its connections."""
        host, port = self.base.rsplit("/", 1)[1].split(":")
        connection = http.client.HTTPConnection(host, int(port), timeout=CLIENT_WAIT)
        started = time.monotonic()
        try:
            connection.request("POST", "/v1/risk/query", json.dumps(query),
                               {"Authorization": self.backend(), "Content-Type": "application/json"})
            response = connection.getresponse()
            return response.status, dict(response.getheaders()), time.monotonic() - started, response.read()
        except (TimeoutError, socket.timeout):
            return 0, {}, time.monotonic() - started, b""
        except (ConnectionError, http.client.HTTPException) as error:
            return -1, {}, time.monotonic() - started, str(error).encode()
        finally:
            connection.close()

    def one(self, index, step):
        device = f"crash-{index}-{step}"
        kind = step % 4
        if kind == 0:
            return "device start", self.sdk("/v1/sdk/device/start", {"deviceId": device, "collectType": 0, "platform": "ios"})
        if kind == 1:
            started = self.sdk("/v1/sdk/device/start", {"deviceId": f"crash-{index}", "collectType": 0, "platform": "ios"})
            if started[0] != 200:
                return "device start", started
            device_id = json.loads(started[3])["deviceId"]
            minted = self.sdk("/v1/sdk/ztoken", {"deviceId": device_id, "eventId": 3300, "accountId": f"acct-{index}"})
            if minted[0] != 200:
                return "ztoken", minted
            # Its risk query: answered on the event loop once the credential and policy are in memory.
            query = {"ztoken": json.loads(minted[3])["z"], "eventId": 3300, "accountId": f"acct-{index}", "clientIp": "203.0.113.9"}
            return "risk query", self.risk_query(query)
        if kind == 2:
            return "backend read", request("GET", self.base + "/v1/backend/whoami", headers={"Authorization": self.backend()})
        return "operator write", request(
            "PATCH", f"{self.base}/v1/admin/apps/{self.app['appKey']}/settings", {"ztokenTtlSeconds": 300 + step % 60}, self.admin
        )

    def client(self, index):
        step = 0
        while self.running:
            what, answer = self.one(index, step)
            with self.lock:
                self.answers.append((what,) + answer[:3])
            step += 1


def lock_granted(command):
    """Whether psql's `command` counts the table's lock as granted; a probe that gets no answer in 5 s
    counts as not yet (the caller's own 10 s bound ends the wait)."""
    try:
        return subprocess.run(command, capture_output=True, text=True, timeout=5).stdout.strip() == "1"
    except subprocess.TimeoutExpired:
        return False


def pending_at_shutdown(base, load, cluster, server):
    """SIGTERM while a fresh token's risk query waits for its batch (its table locked for 1.5 s): the
    instance answers it before it exits, and exits 0."""
    started = load.sdk("/v1/sdk/device/start", {"deviceId": "shutdown", "collectType": 0, "platform": "ios"})
    device_id = json.loads(started[3])["deviceId"]
    tokens = [json.loads(load.sdk("/v1/sdk/ztoken", {"deviceId": device_id, "eventId": 3300, "accountId": "shutdown"})[3])["z"]
              for _ in range(2)]
    queries = [{"ztoken": token, "eventId": 3300, "accountId": "shutdown", "clientIp": "203.0.113.9"} for token in tokens]
    # The first leaves the backend's credential and the app's policy in memory, for the event loop.
    check(load.risk_query(queries[0])[0] == 200, "a fresh risk query before the shutdown")
    psql = [os.path.join(cluster.bindir, "psql"), "-X", "-q", "-t", "-A", cluster.url, "-c"]
    lock = subprocess.Popen(psql + ["BEGIN; LOCK TABLE consumed_ztokens IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(1.5); COMMIT;"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    granted = "SELECT count(*) FROM pg_locks WHERE relation = 'consumed_ztokens'::regclass AND mode = 'AccessExclusiveLock' AND granted"
    asked = time.monotonic()
    while not lock_granted(psql + [granted]):
        if time.monotonic() - asked > 10 or lock.poll() is not None:
            lock.kill()
            check(False, "the table was locked for the shutdown check")
            return
        time.sleep(0.02)
    answers = []
    asking = threading.Thread(target=lambda: answers.append(load.risk_query(queries[1])))
    asking.start()
    time.sleep(0.3)
    server.send_signal(signal.SIGTERM)
    asking.join(CLIENT_WAIT)
    try:
        lock.wait(10)
    except subprocess.TimeoutExpired:
        lock.kill()
    status = answers[0][0] if answers else None
    check(status == 200 and json.loads(answers[0][3]).get("tokenState") == "fresh",
          f"a risk query waiting for its batch at SIGTERM answered before the exit ({status})")
    try:
        code = server.wait(15)
    except subprocess.TimeoutExpired:
        code = None
    check(code == 0, f"the instance exited 0 after it ({code})")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--cycles", type=int, default=30)
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="gatehouse-crash.")
    os.chmod(folder, 0o755)
    cluster = Cluster(os.path.join(folder, "pg"))
    server = None
    try:
        master_key = base64.b64encode(os.urandom(32)).decode()
        environment = dict(os.environ, GATEHOUSE_DATABASE_URL=cluster.url, GATEHOUSE_MASTER_KEY=master_key, GATEHOUSE_LOG_LEVEL="error")
        subprocess.run([args.binary, "migrate"], env=environment, check=True, capture_output=True)
        token = subprocess.run(
            [args.binary, "admin-token", "create", "--name", "crash"], env=environment, check=True, capture_output=True, text=True
        ).stdout.strip()
        port = free_port()
        log = open(os.path.join(folder, "serve.log"), "w")
        server = subprocess.Popen(
            [args.binary, "serve", "--port", str(port)],
            env=dict(environment, GATEHOUSE_DATABASE_TIMEOUT_SECONDS="3", GATEHOUSE_PURGE_INTERVAL_SECONDS="0"),
            stdout=log, stderr=subprocess.STDOUT,
        )
        base = f"http://127.0.0.1:{port}"
        for _ in range(100):
            if request("GET", base + "/health/ready")[0] == 200:
                break
            time.sleep(0.2)
        admin = {"Authorization": f"Bearer {token}"}
        status, _, _, raw = request("POST", base + "/v1/admin/apps", {"name": "Crash", "platforms": ["ios"]}, admin)
        assert status == 201, (status, raw)
        created = json.loads(raw)
        app = {"appKey": created["app"]["appKey"], "secretKey": created["secretKey"], "serverSecret": created["serverSecret"]}
        status, _, _, raw = request("POST", f"{base}/v1/admin/apps/{app['appKey']}/events", {"eventId": 3300, "name": "login"}, admin)
        assert status == 201, (status, raw)

        load = Load(base, admin, app)
        load.start()
        time.sleep(1)
        readiness = []
        random.seed(20261123)
        for cycle in range(args.cycles):
            time.sleep(random.uniform(0.3, 1.0))
            cluster.crash()
            crashed = time.monotonic()
            down = 5.0 if cycle == args.cycles // 2 else random.uniform(0.2, 1.2)
            said_503 = None
            while time.monotonic() - crashed < down:
                status, headers, seconds, _ = request("GET", base + "/health/ready")
                readiness.append((status, seconds))
                if status == 503 and said_503 is None:
                    said_503 = time.monotonic() - crashed
                time.sleep(0.1)
            if cycle == args.cycles // 2:
                check(said_503 is not None and said_503 <= 2.0, f"a 5 s outage: /health/ready says 503 within 2 s ({said_503})")
            cluster.start()
        time.sleep(2)
        load.stop()

        answers = load.answers
        unanswered = [a for a in answers if a[1] == 0]
        refused_connections = [a for a in answers if a[1] == -1]
        errors = [a for a in answers if a[1] >= 500 and a[1] != 503]
        without_retry = [a for a in answers if a[1] == 503 and "Retry-After" not in a[2]]
        served = [a for a in answers if 200 <= a[1] < 300]
        unavailable = [a for a in answers if a[1] == 503]
        slowest = max(a[3] for a in answers)
        print(f"{len(answers)} requests in {args.cycles} crash cycles: {len(served)} served, {len(unavailable)} answered 503, "
              f"slowest answer {slowest:.2f} s")
        check(len(unanswered) == 0, f"every request answered within {CLIENT_WAIT} s ({len(unanswered)} left hanging)")
        check(len(refused_connections) == 0, f"no connection refused or reset by the instance ({len(refused_connections)})")
        check(len(errors) == 0, f"no 5xx but 503 ({sorted(set((a[0], a[1]) for a in errors))})")
        check(len(without_retry) == 0, f"every 503 carries Retry-After ({len(without_retry)} without)")
        check(slowest <= 12, f"the slowest answer came within 12 s (database timeout 3 s) ({slowest:.2f} s)")
        check(len(served) > 0 and len(unavailable) > 0, "the load saw both service and outages")
        # Fresh tokens' risk queries, most answered on the event loop (their batch's 503s too).
        risk = [a for a in answers if a[0] == "risk query"]
        metrics = request("GET", base + "/metrics")[3].decode()
        on_loop = sum(float(line.split()[-1]) for line in metrics.splitlines()
                      if line.startswith('gatehouse_answers_in_memory_total{') and 'route="/v1/risk/query"' in line)
        check(any(a[1] == 200 for a in risk) and on_loop > 0,
              f"risk queries served through the crashes ({len(risk)} asked, {sum(a[1] == 200 for a in risk)} served, "
              f"{sum(a[1] == 503 for a in risk)} answered 503; {on_loop:.0f} answered on the event loop)")
        slow_ready = [r for r in readiness if r[1] > 2.0]
        check(not slow_ready, f"/health/ready always answered within 2 s during outages ({len(readiness)} asked, slowest "
              f"{max(r[1] for r in readiness):.2f} s)")

        # The same process, no restart: ready again, and serving.
        recovered = None
        started = time.monotonic()
        while time.monotonic() - started < 30:
            if request("GET", base + "/health/ready")[0] == 200:
                recovered = time.monotonic() - started
                break
            time.sleep(0.2)
        check(recovered is not None, f"ready again after the last restart ({recovered} s)")
        after = Load(base, admin, app)
        for step, what in [(0, "new SDK device starts"), (3, "operator writes")]:
            retried, refused = [], []
            for _ in range(20):
                answer = after.one(100, step)[1]
                if answer[0] == 503 and "Retry-After" in answer[1]:
                    # A pooled connection to the database that died may be found dead only by the request
                    # that takes it; the 503 says to come back, and the client does, once.
                    retried.append(answer[3][:200])
                    time.sleep(min(2, int(answer[1]["Retry-After"])))
                    answer = after.one(100, step)[1]
                if answer[0] != 200:
                    refused.append((answer[0], answer[3][:200]))
            check(not refused and len(retried) <= 2,
                  f"after 30 crashes, {20 - len(refused)} of 20 {what} served, {len(retried)} after one retry "
                  f"({refused}, retried after {retried})")
        check(server.poll() is None, "the instance never exited")
        pending_at_shutdown(base, after, cluster, server)
    finally:
        if server is not None:
            stop_process(server)
        cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)
    finish("database crash")


if __name__ == "__main__":
    main()
