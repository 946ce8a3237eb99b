#!/usr/bin/env python3
"""Failover with no acknowledged write lost: a pg_auto_failover formation on loopback, two Gatehouse
instances on its multi-host URL, the primary stopped hard under load, twice (there and back).

The formation (Debian's postgresql-15-auto-failover and pg-auto-failover-cli): a monitor, a primary
and a secondary with synchronous replication (pg_auto_failover's default for two nodes: a commit
returns once the secondary has it). The monitor's health checks are shortened (docs/operations.md) so
that a failover takes seconds, not the default minute. Both instances get
`postgres://...@127.0.0.1:P1,127.0.0.1:P2/gatehouse?target_session_attrs=read-write`.

Load: six clients, each alternating between the two instances: risk queries with fresh ztokens minted
as a device mints them (each consumes its token and stores a decision before answering), operator
writes (a deny-list entry each), and STS credentials vended from a role's cache (moto as the upstream,
called once before the load). Every answer is recorded with its time. Then the primary's keeper is
killed and its PostgreSQL stopped with `pg_ctl stop -m immediate`; the formation promotes the
secondary; the old primary's keeper is started again (it rejoins as a secondary) and the same is done
to the new primary.

Asserted, for each failover:
- every answer is a success or a 503 with Retry-After (never a 500, a reset or a hang past 30 s);
- both instances serve writes again on their own (no restart) within 60 s of the stop;
- STS credentials are vended throughout, outside the gap;
and after both, every acknowledged write (each decision id answered 200, each entry id answered 201)
is on the final primary: 0 lost. The figures are printed and written to --report.

    failover.py --binary .build/debug/gatehouse [--report FILE]
"""
import argparse
import base64
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
from ztoken_mint import mint, unb64url  # noqa: E402
from interop_common import CLIENT_WAIT, ClientThreads, check, finish, free_port, request, stop_process  # noqa: E402
from sdk_sign import sign  # noqa: E402
from attestation_interop import Gatehouse  # noqa: E402
from sts_interop import AWS_TEMPLATE, attested_device, setup_moto, start_moto, sts_token  # noqa: E402

OWNER = os.environ.get("PG_CLUSTER_USER", "postgres")
# The monitor's health checks, shortened from a minute in all to seconds; the demote timeout is how
# long the monitor waits for a primary it cannot reach to step down by itself before promoting.
MONITOR_SETTINGS = {
    "health_check_period": 1000, "health_check_timeout": 1000, "health_check_max_retries": 1, "health_check_retry_delay": 500,
    "node_considered_unhealthy_timeout": 4000, "primary_demote_timeout": 6000,
}
SERVE_AGAIN_WITHIN = 60


class Formation:
    """A pg_auto_failover monitor and two nodes, each pg_autoctl running in a process group of its own."""

    def __init__(self, folder):
        self.folder = folder
        self.bindir = subprocess.run(["pg_config", "--bindir"], capture_output=True, text=True, check=True).stdout.strip()
        self.environment = dict(os.environ, PATH=self.bindir + ":" + os.environ["PATH"],
                                XDG_CONFIG_HOME=os.path.join(folder, "config"), XDG_DATA_HOME=os.path.join(folder, "data"))
        self.monitor_port = free_port()
        self.ports = {"node1": free_port(), "node2": free_port()}
        self.keepers = {}

    def as_owner(self, command):
        return ["runuser", "-u", OWNER, "--"] + command if os.getuid() == 0 else command

    def spawn(self, name, command):
        log = open(os.path.join(self.folder, name + ".log"), "a")
        self.keepers[name] = subprocess.Popen(self.as_owner(command), env=self.environment, stdout=log, stderr=subprocess.STDOUT,
                                              cwd=self.folder, start_new_session=True)

    def psql(self, port, sql, database="gatehouse", timeout=5):
        result = subprocess.run(["psql", "-h", "127.0.0.1", "-p", str(port), "-U", OWNER, "-d", database, "-Atc", sql],
                                capture_output=True, text=True, timeout=timeout)
        return result.stdout.strip() if result.returncode == 0 else None

    def wait(self, what, condition, seconds):
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if condition():
                return True
            time.sleep(0.5)
        raise RuntimeError("the formation did not reach: " + what + "\n" + self.state_text())

    def state_text(self):
        return subprocess.run(self.as_owner(["pg_autoctl", "show", "state", "--pgdata", os.path.join(self.folder, "monitor")]),
                              env=self.environment, capture_output=True, text=True).stdout

    def states(self):
        shown = subprocess.run(self.as_owner(["pg_autoctl", "show", "state", "--json", "--pgdata", os.path.join(self.folder, "monitor")]),
                               env=self.environment, capture_output=True, text=True)
        try:
            return {node["nodename"]: (node["current_group_state"], node["assigned_group_state"]) for node in json.loads(shown.stdout)}
        except (ValueError, KeyError):
            return {}

    def settled(self, primary, secondary):
        states = self.states()
        return states.get(primary) == ("primary", "primary") and states.get(secondary) == ("secondary", "secondary")

    def create(self):
        self.spawn("monitor", ["pg_autoctl", "create", "monitor", "--pgdata", os.path.join(self.folder, "monitor"), "--pgport",
                               str(self.monitor_port), "--hostname", "127.0.0.1", "--auth", "trust", "--no-ssl", "--run"])
        self.wait("the monitor answers", lambda: self.psql(self.monitor_port, "SELECT 1", "pg_auto_failover") == "1", 60)
        for name, value in MONITOR_SETTINGS.items():
            self.psql(self.monitor_port, "ALTER SYSTEM SET pgautofailover.%s = %d" % (name, value), "pg_auto_failover")
        self.psql(self.monitor_port, "SELECT pg_reload_conf()", "pg_auto_failover")
        monitor = "postgres://autoctl_node@127.0.0.1:%d/pg_auto_failover?sslmode=disable" % self.monitor_port
        for name in ("node1", "node2"):
            self.spawn(name, ["pg_autoctl", "create", "postgres", "--pgdata", os.path.join(self.folder, name), "--pgport",
                              str(self.ports[name]), "--hostname", "127.0.0.1", "--name", name, "--monitor", monitor, "--auth", "trust",
                              "--no-ssl", "--dbname", "gatehouse", "--run"])
            if name == "node1":
                self.wait("node1 alone accepts writes", lambda: self.psql(self.ports["node1"], "SHOW transaction_read_only") == "off", 90)
        # The secondary's base backup waits for a checkpoint, spread over minutes unless asked now.
        time.sleep(2)
        self.psql(self.ports["node1"], "CHECKPOINT")
        self.wait("node1 primary, node2 secondary", lambda: self.settled("node1", "node2"), 120)
        check(self.psql(self.ports["node1"], "SHOW synchronous_standby_names") not in (None, ""),
              "the formation replicates synchronously (%s)" % self.psql(self.ports["node1"], "SHOW synchronous_standby_names"))

    def url(self):
        hosts = ",".join("127.0.0.1:%d" % self.ports[name] for name in ("node1", "node2"))
        return "postgres://%s@%s/gatehouse?sslmode=disable&target_session_attrs=read-write" % (OWNER, hosts)

    def stop_hard(self, name):
        """The node's keeper killed (so nothing restarts it), then its PostgreSQL stopped at once."""
        os.killpg(self.keepers[name].pid, signal.SIGKILL)
        self.keepers[name].wait(10)
        subprocess.run(self.as_owner([os.path.join(self.bindir, "pg_ctl"), "stop", "-m", "immediate", "-D",
                                      os.path.join(self.folder, name)]), capture_output=True)

    def restart(self, name):
        self.spawn(name, ["pg_autoctl", "run", "--pgdata", os.path.join(self.folder, name)])

    def primary_port(self):
        for name, port in self.ports.items():
            if self.psql(port, "SHOW transaction_read_only") == "off":
                return port
        return None

    def close(self):
        for name in ("node2", "node1", "monitor"):
            keeper = self.keepers.get(name)
            if keeper is not None and keeper.poll() is None:
                os.killpg(keeper.pid, signal.SIGTERM)
                try:
                    keeper.wait(20)
                except subprocess.TimeoutExpired:
                    os.killpg(keeper.pid, signal.SIGKILL)
        for name in ("node1", "node2", "monitor"):
            subprocess.run(self.as_owner([os.path.join(self.bindir, "pg_ctl"), "stop", "-m", "immediate", "-D",
                                          os.path.join(self.folder, name)]), capture_output=True)


class Load(ClientThreads):
    """Six clients alternating between the instances: risk queries with fresh ztokens, list entries,
    and STS credentials vended from the role's cache."""

    def __init__(self, bases, admin, app, devices, sts_headers):
        super().__init__(6, CLIENT_WAIT)
        self.bases, self.admin, self.app, self.devices, self.sts_headers = bases, admin, app, devices, sts_headers
        self.backend = {"Authorization": "Basic " + base64.b64encode(("%s:%s" % (app["appKey"], app["serverSecret"])).encode()).decode()}
        # self.answers: (time, instance, kind, status, has Retry-After, acknowledged id)

    def one(self, index, step):
        instance = (index + step) % len(self.bases)
        base = self.bases[instance]
        if step % 3 == 2:
            status, headers, _, raw = request("GET", "%s/v1/sts/token?appKey=%s&roleId=uploads" % (base, self.app["appKey"]),
                                              headers=self.sts_headers)
            return instance, "sts", status, headers, None
        if step % 3 == 0:
            device = self.devices[index]
            account = "failover-%d" % index
            token = mint(unb64url(device["ztokenKey"]), unb64url(device["ztokenContext"]), 3300, account, 300, int(time.time()),
                         os.urandom(12))
            status, headers, _, raw = request("POST", base + "/v1/risk/query",
                                              {"ztoken": token, "eventId": 3300, "accountId": account, "clientIp": "203.0.113.9"},
                                              self.backend)
            acknowledged = json.loads(raw)["decisionId"] if status == 200 else None
            if status == 200:
                assert json.loads(raw)["tokenState"] == "fresh", raw
            return instance, "decision", status, headers, acknowledged
        value = "failover-%s" % uuid.uuid4()
        status, headers, _, raw = request("POST", "%s/v1/admin/apps/%s/risk/lists" % (base, self.app["appKey"]),
                                          {"list": "deny", "type": "account", "value": value}, self.admin)
        return instance, "list entry", status, headers, json.loads(raw)["entryId"] if status == 201 else None

    def client(self, index):
        step = 0
        while self.running:
            instance, kind, status, headers, acknowledged = self.one(index, step)
            with self.lock:
                self.answers.append((time.monotonic(), instance, kind, status, "Retry-After" in headers, acknowledged))
            step += 1
            time.sleep(0.02)


def serving_again(answers, stopped, instances):
    """Seconds from the stop until each instance's writes succeed again for good (its last failure
    after the stop, then its next success); None for an instance that never did."""
    figures = []
    for instance in range(instances):
        after = [a for a in answers if a[1] == instance and a[0] >= stopped and a[2] in ("decision", "list entry")]
        failures = [a[0] for a in after if a[3] not in (200, 201)]
        last_failure = max(failures) if failures else stopped
        successes = [a[0] for a in after if a[3] in (200, 201) and a[0] > last_failure]
        figures.append(min(successes) - stopped if successes else None)
    return figures


def failover(formation, load, old, new, report):
    started_answers = len(load.answers)
    stopped = time.monotonic()
    formation.stop_hard(old)
    formation.wait(new + " promoted", lambda: formation.psql(formation.ports[new], "SHOW transaction_read_only", timeout=2) == "off", 120)
    promoted = time.monotonic() - stopped
    deadline = stopped + SERVE_AGAIN_WITHIN
    while time.monotonic() < deadline:
        figures = serving_again(load.answers, stopped, len(load.bases))
        if all(figure is not None for figure in figures) and time.monotonic() - stopped > max(figures) + 3:
            break
        time.sleep(0.5)
    with load.lock:
        answers = load.answers[started_answers:]
    figures = serving_again(answers, stopped, len(load.bases))
    during = [a for a in answers if a[0] >= stopped]
    statuses = sorted(set(a[3] for a in during))
    unavailable = [a for a in during if a[3] == 503]
    print("%s stopped hard: %s writable after %.1f s; instances serving writes again after %s s; %d answers since, statuses %s"
          % (old, new, promoted, ", ".join("%.1f" % f if f is not None else "never" for f in figures), len(during), statuses))
    check(all(f is not None and f <= SERVE_AGAIN_WITHIN for f in figures),
          "both instances serve writes again on their own within %d s of the stop (%s)" % (SERVE_AGAIN_WITHIN, figures))
    check(set(statuses) <= {200, 201, 503}, "clients saw only successes and 503s (%s)" % statuses)
    check(all(a[4] for a in unavailable), "every 503 carried Retry-After")
    report.append("- %s stopped hard (`pg_ctl stop -m immediate`, its keeper killed): %s accepted writes %.1f s later; the two "
                  "instances served writes again %s s after the stop, with no restart; from the stop until both had served for 3 s "
                  "more, %d answers: %d successes, %d 503 with Retry-After, nothing else."
                  % (old, new, promoted, " and ".join("%.1f" % f for f in figures if f is not None), len(during),
                     len([a for a in during if a[3] in (200, 201)]), len(unavailable)))
    return figures


def start_instance(binary, environment, folder, name):
    port = free_port()
    log = open(os.path.join(folder, name + ".log"), "w")
    process = subprocess.Popen([binary, "serve", "--port", str(port)], env=environment, stdout=log, stderr=subprocess.STDOUT)
    base = "http://127.0.0.1:%d" % port
    for _ in range(150):
        if request("GET", base + "/health/ready")[0] == 200:
            return process, base
        time.sleep(0.2)
    raise RuntimeError(name + " did not become ready")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", required=True)
    parser.add_argument("--report")
    args = parser.parse_args()
    folder = tempfile.mkdtemp(prefix="gatehouse-failover.")
    os.chmod(folder, 0o755)
    if os.getuid() == 0:
        shutil.chown(folder, OWNER)
    formation = Formation(folder)
    instances = []
    report = []
    moto = None
    try:
        formation.create()
        master_key = base64.b64encode(os.urandom(32)).decode()
        environment = dict(os.environ, GATEHOUSE_DATABASE_URL=formation.url(), GATEHOUSE_MASTER_KEY=master_key, GATEHOUSE_LOG_LEVEL="notice",
                           GATEHOUSE_DATABASE_TIMEOUT_SECONDS="3", GATEHOUSE_PURGE_INTERVAL_SECONDS="0",
                           GATEHOUSE_STS_PRIVATE_ENDPOINTS="true")
        subprocess.run([args.binary, "migrate"], env=environment, check=True, capture_output=True)
        token = subprocess.run([args.binary, "admin-token", "create", "--name", "failover"], env=environment, check=True,
                               capture_output=True, text=True).stdout.strip()
        for name in ("instance-a", "instance-b"):
            instances.append(start_instance(args.binary, environment, folder, name))
        bases = [base for _, base in instances]
        admin = {"Authorization": "Bearer " + token}
        gatehouse = Gatehouse(bases[0], token)
        created = gatehouse.create_app("Failover")
        app = {"appKey": created["app"]["appKey"], "secretKey": created["secretKey"], "serverSecret": created["serverSecret"]}
        # An STS role whose credentials are cached: moto as the upstream, called once before the load.
        _, sts_headers = attested_device(gatehouse, created, "alice")
        moto, moto_url = start_moto()
        access_key, secret, role_arn = setup_moto(moto_url)
        status, _, role = gatehouse.admin_call("POST", "/v1/admin/apps/%s/roles" % app["appKey"], {
            "roleId": "uploads", "provider": "aws", "stsEndpoint": moto_url, "region": "us-east-1", "roleArn": role_arn,
            "attestId": "login-pow", "accessKeyId": access_key, "accessKeySecret": secret, "durationSeconds": 1800,
            "maxDurationSeconds": 7200, "policyTemplate": AWS_TEMPLATE, "storageEndpoint": moto_url})
        assert status == 201, role
        status, _, vended = sts_token(gatehouse, app["appKey"], "uploads", sts_headers)
        assert status == 200, vended
        status, _, _, raw = request("POST", "%s/v1/admin/apps/%s/events" % (bases[0], app["appKey"]), {"eventId": 3300, "name": "login"}, admin)
        assert status == 201, raw
        devices = []
        for index in range(6):
            body = json.dumps({"deviceId": "failover-%d" % index, "collectType": 0, "platform": "ios"}).encode()
            headers = sign(app["appKey"], app["secretKey"], "POST", "/v1/sdk/device/start", body)
            status, _, _, raw = request("POST", bases[index % 2] + "/v1/sdk/device/start", json.loads(body), headers)
            assert status == 200, raw
            devices.append(json.loads(raw))
        time.sleep(2.5)  # the instances' caches of the app's events (2 s), so that both know event 3300

        load = Load(bases, admin, app, devices, sts_headers)
        load.start()
        time.sleep(3)
        failover(formation, load, "node1", "node2", report)
        formation.restart("node1")
        formation.wait("node1 back as secondary", lambda: formation.settled("node2", "node1"), 120)
        time.sleep(3)
        failover(formation, load, "node2", "node1", report)
        time.sleep(2)
        load.stop()

        answers = load.answers
        check(not [a for a in answers if a[3] in (0, -1)], "every request was answered (%d hung or reset)"
              % len([a for a in answers if a[3] in (0, -1)]))
        vended = [a for a in answers if a[2] == "sts" and a[3] == 200]
        check(len(vended) > 0, "STS credentials were vended from the cache throughout (%d times)" % len(vended))
        decisions = [a[5] for a in answers if a[2] == "decision" and a[5]]
        entries = [a[5] for a in answers if a[2] == "list entry" and a[5]]
        primary = formation.primary_port()
        stored_decisions = set((formation.psql(primary, "SELECT decision_id FROM risk_decisions", timeout=30) or "").split())
        stored_entries = set((formation.psql(primary, "SELECT entry_id FROM risk_lists", timeout=30) or "").split())
        lost = [d for d in decisions if d not in stored_decisions] + [e for e in entries if e not in stored_entries]
        print("%d acknowledged writes (%d decisions, %d list entries) over two failovers; %d lost" % (
            len(decisions) + len(entries), len(decisions), len(entries), len(lost)))
        check(len(decisions) > 0 and len(entries) > 0, "the load acknowledged writes of both kinds")
        check(not lost, "no acknowledged write lost (%s)" % lost[:5])
        sts_refused = [a for a in answers if a[2] == "sts" and a[3] != 200]
        report.append("- STS credentials vended from the role's cache %d times over the run; %d STS requests answered %s."
                      % (len(vended), len(sts_refused), sorted(set(a[3] for a in sts_refused)) or "otherwise"))
        report.append("- %d acknowledged writes over both failovers (%d decisions with fresh ztokens, %d deny-list entries): all "
                      "%d on the final primary, 0 lost." % (len(decisions) + len(entries), len(decisions), len(entries),
                                                            len(decisions) + len(entries) - len(lost)))
        for process, _ in instances:
            check(process.poll() is None, "an instance never exited")
        if args.report:
            with open(args.report, "w") as handle:
                handle.write("\n".join(report) + "\n")
    finally:
        if moto is not None:
            moto.terminate()
        for process, _ in instances:
            stop_process(process)
        formation.close()
        if not os.environ.get("KEEP_FAILOVER"):
            shutil.rmtree(folder, ignore_errors=True)
    finish("failover")


if __name__ == "__main__":
    main()
