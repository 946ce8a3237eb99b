#!/usr/bin/env python3
"""Every route of openapi.yaml, every way of spelling its path, every credential state.

For each operation of the contract the path is sent as written and in the spellings an attacker
tries (doubled and trailing slashes, `.` and `..` segments, percent-escapes of a letter and of a
slash, double encoding, `;` parameters, a backslash, another case), with every credential state of
its audience: none, a bad one, a revoked admin token, a viewer's admin token on a change, another
app's appKey with this app's secret, a disabled app's valid credential, the right credential in
another header, another audience's credential. Asserted:

- nothing protected answers 2xx without its credential, and nothing answers 5xx, in any state;
- every spelling other than the canonical one is refused (4xx) even with the right credential;
- the same, through a real nginx running the shipped deploy/nginx/gatehouse-proxy.conf;
- through the shipped gatehouse-gate.conf, the gate's sub-request location cannot be reached from
  outside and a client's own X-Gatehouse-Authorization never replaces the proxy's credential.

    route_guard.py --url http://127.0.0.1:8080 --admin-token gat_... --binary .build/debug/gatehouse \
        --database-url postgres://... [--nginx /usr/sbin/nginx]
"""
import argparse
import base64
import concurrent.futures
import http.client
import os
import re
import subprocess
import tempfile
import time
import urllib.parse

import yaml

from interop_common import call, check, finish, run_nginx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
METHODS = ("get", "put", "post", "delete", "patch", "head", "options")


def basic(app_key, secret):
    return "Basic " + base64.b64encode(f"{app_key}:{secret}".encode()).decode()


def variants(path):
    """The canonical path and the other spellings of it, each with what it tries."""
    segments = path.strip("/").split("/")
    first, rest = segments[0], "/".join(segments[1:])
    tail = "/" + rest if rest else ""
    spelled = [
        ("doubled leading slash", "/" + path),
        ("doubled inner slash", f"/{first}/" + tail if rest else path + "//"),
        ("trailing slash", path + "/"),
        ("dot segment", f"/{first}/." + tail),
        ("dot-dot segment", f"/{first}/x/.." + tail),
        ("percent-escaped letter", "/" + "%{:02X}".format(ord(path[1])) + path[2:]),
        ("escaped slash", f"/{first}%2F{rest}" if rest else path + "%2F"),
        ("double encoding", "/" + "%25{:02X}".format(ord(path[1])) + path[2:]),
        ("semicolon parameter", f"/{first};x=1" + tail),
        ("dot-dot semicolon", f"/{first}/..;/{first}" + tail),
        ("backslash", f"/{first}\\" + rest if rest else path + "\\"),
        ("upper case", path.upper()),
        ("encoded dot segment", f"/{first}/%2e" + tail),
    ]
    return [(what, spelling) for what, spelling in spelled if spelling != path]


class Routes:
    def __init__(self, spec_path):
        with open(spec_path) as handle:
            self.spec = yaml.safe_load(handle)

    def operations(self):
        for template, item in self.spec["paths"].items():
            for method, operation in item.items():
                if method not in METHODS:
                    continue
                yield template, method.upper(), operation

    @staticmethod
    def audience(template, operation):
        schemes = {name for requirement in operation.get("security", []) for name in requirement}
        names = {parameter.get("name") for parameter in operation.get("parameters", []) if isinstance(parameter, dict)}
        refs = {parameter.get("$ref", "").rsplit("/", 1)[-1] for parameter in operation.get("parameters", []) if isinstance(parameter, dict)}
        if "adminToken" in schemes:
            return "operators"
        if "consoleSession" in schemes:
            return "console"
        if template == "/v1/gate/verify":
            return "gateway"
        if "serverSecret" in schemes:
            return "backend"
        if "SDKSignature" in refs or "X-Gatehouse-Signature" in names:
            return "sdk"
        if "attestationBearer" in schemes:
            return "attested"
        return "open"


def fill(template, values):
    path = template
    for name, value in values.items():
        path = path.replace("{" + name + "}", value)
    return path


def send(base, method, path, headers, body=None):
    """Sends the path exactly as given (no client-side normalisation) and returns the status."""
    parsed = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    try:
        headers = dict(headers)
        form = headers.pop("_form", None)
        connection.putrequest(method, path, skip_accept_encoding=True)
        for name, value in headers.items():
            connection.putheader(name, value)
        payload = body if body is not None else (b"{}" if method in ("POST", "PUT", "PATCH") else None)
        if form is not None:
            payload = form.encode()
            connection.putheader("Content-Type", "application/x-www-form-urlencoded")
        elif payload is not None:
            connection.putheader("Content-Type", "application/json")
            connection.putheader("Content-Length", str(len(payload)))
        connection.endheaders(payload)
        response = connection.getresponse()
        response.read()
        return response.status
    finally:
        connection.close()


def credential_states(audience, creds, method="GET"):
    """(what, headers) for every state that must not pass this audience's guard (a viewer's admin
    token passes the operators' reads, never their changes)."""
    admin, revoked, app_a, app_b, disabled = creds["admin"], creds["revoked"], creds["a"], creds["b"], creds["disabled"]
    backend_a = basic(app_a["appKey"], app_a["serverSecret"])
    states = [("no credential", {})]
    if audience == "operators":
        states += [
            ("unknown admin token", {"Authorization": "Bearer gat_" + "A" * 43}),
            ("revoked admin token", {"Authorization": f"Bearer {revoked}"}),
            ("an app's backend credential", {"Authorization": backend_a}),
            ("admin token in another header", {"X-Gatehouse-Authorization": f"Bearer {admin}", "Cookie": f"token={admin}"}),
            ("admin token as a query parameter", {"_query": f"access_token={admin}"}),
        ]
        if method != "GET":
            states.append(("a viewer's admin token", {"Authorization": f"Bearer {creds['viewer']}"}))
    elif audience in ("backend", "gateway"):
        states += [
            ("wrong server secret", {"Authorization": basic(app_a["appKey"], "x" * 43)}),
            ("another app's appKey with this secret", {"Authorization": basic(app_b["appKey"], app_a["serverSecret"])}),
            ("a disabled app's credential", {"Authorization": basic(disabled["appKey"], disabled["serverSecret"])}),
            ("an admin token", {"Authorization": f"Bearer {admin}"}),
        ]
        if audience == "backend":
            states.append(("credential in the gateway's header", {"X-Gatehouse-Authorization": backend_a}))
        else:
            states = [(what, {("X-Gatehouse-Authorization" if k == "Authorization" else k): v for k, v in h.items()}) for what, h in states]
            states.append(("credential in Authorization, not the configured header", {"Authorization": backend_a}))
            for what, headers in states:
                headers.update({"X-Original-Method": "GET", "X-Original-URI": "/"})
    elif audience == "sdk":
        stamp = str(int(time.time() * 1000))
        states += [
            ("bad signature", {"X-Gatehouse-AppKey": app_a["appKey"], "X-Gatehouse-Timestamp": stamp, "X-Gatehouse-Nonce": "n" * 16, "X-Gatehouse-Signature": "0" * 64}),
            ("another app's appKey", {"X-Gatehouse-AppKey": app_b["appKey"], "X-Gatehouse-Timestamp": stamp, "X-Gatehouse-Nonce": "m" * 16, "X-Gatehouse-Signature": "1" * 64}),
            ("a backend credential", {"Authorization": backend_a}),
            ("an admin token", {"Authorization": f"Bearer {admin}"}),
        ]
    elif audience == "console":
        session = creds["console"]
        cookie = f"gatehouse_console={session['cookie']}"
        form = f"csrf={session['csrf']}&name=guard&eventId=3300&overlapSeconds=0&status=disabled"
        states += [
            ("unknown session cookie", {"Cookie": "gatehouse_console=ghs_" + "A" * 43, "_form": form}),
            ("a revoked token's session", {"Cookie": f"gatehouse_console={creds['revoked_console']['cookie']}",
                                           "_form": f"csrf={creds['revoked_console']['csrf']}"}),
            ("an admin token as a bearer", {"Authorization": f"Bearer {admin}", "_form": form}),
            ("an admin token as the cookie", {"Cookie": f"gatehouse_console={admin}", "_form": form}),
            ("the session in another header", {"Authorization": f"Bearer {session['cookie']}", "X-Gatehouse-Authorization": session["cookie"],
                                               "_form": form}),
            ("the session under another cookie name", {"Cookie": f"session={session['cookie']}; token={session['cookie']}", "_form": form}),
            ("the session as a query parameter", {"_query": f"gatehouse_console={session['cookie']}", "_form": form}),
        ]
        if method != "GET":
            states += [
                ("a viewer's session", {"Cookie": f"gatehouse_console={creds['viewer_console']['cookie']}",
                                        "_form": f"csrf={creds['viewer_console']['csrf']}&name=guard&eventId=3300"}),
                ("the session without its form token", {"Cookie": cookie, "_form": "name=guard&eventId=3300&overlapSeconds=0"}),
                ("another session's form token", {"Cookie": cookie, "_form": f"csrf={creds['viewer_console']['csrf']}&name=guard&eventId=3300"}),
                ("a post from another site", {"Cookie": cookie, "Origin": "https://evil.example", "Sec-Fetch-Site": "cross-site", "_form": form}),
            ]
    elif audience == "attested":
        states += [("a bogus attestation token", {"Authorization": "Bearer eyJhbGciOiJFUzI1NiJ9.e30.AAAA", "EO-Attest-Token": "x.y.z"})]
    return states


def right_credential(audience, creds):
    app_a = creds["a"]
    if audience == "operators":
        return {"Authorization": f"Bearer {creds['admin']}"}
    if audience == "backend":
        return {"Authorization": basic(app_a["appKey"], app_a["serverSecret"])}
    if audience == "console":
        return {"Cookie": f"gatehouse_console={creds['console']['cookie']}", "_form": f"csrf={creds['console']['csrf']}"}
    if audience == "gateway":
        return {"X-Gatehouse-Authorization": basic(app_a["appKey"], app_a["serverSecret"]), "X-Original-Method": "GET", "X-Original-URI": "/"}
    return {}


def enumerate_routes(base, label, routes, creds, values):
    operations = 0
    refusals = 0
    for template, method, operation in routes.operations():
        operations += 1
        audience = Routes.audience(template, operation)
        canonical = fill(template, values)
        for what, headers in credential_states(audience, creds, method):
            headers = dict(headers)
            query = headers.pop("_query", None)
            for spelling_what, path in [("canonical", canonical)] + variants(canonical):
                target = path + ("?" + query if query else "")
                status = send(base, method, target, headers)
                refusals += 1
                if status >= 500:
                    check(False, f"{label}: {method} {target} ({spelling_what}, {what}) answered {status}")
                elif audience != "open" and 200 <= status < 300:
                    check(False, f"{label}: {method} {target} ({spelling_what}, {what}) answered {status} without its credential")
        for spelling_what, path in variants(canonical):
            status = send(base, method, path, right_credential(audience, creds))
            refusals += 1
            if not 400 <= status < 500:
                check(False, f"{label}: {method} {path} ({spelling_what}, right credential) answered {status}, not a refusal")
    check(operations >= 50, f"{label}: {operations} operations of openapi.yaml enumerated, {refusals} requests, none admitted")


def malformed_chunks(base, label, creds):
    """A chunked body that breaks the framing is the client's error: 400, never 500."""
    import socket

    parsed = urllib.parse.urlsplit(base)
    bodies = {
        "bad chunk size": b"zz\r\n{}\r\n0\r\n\r\n",
        "size larger than the data": b"ff\r\n{}\r\n0\r\n\r\n",
        "missing chunk terminator": b"2\r\n{}XX0\r\n\r\n",
    }
    for path, headers in [
        ("/v1/admin/apps", f"Authorization: Bearer {creds['admin']}\r\n"),
        ("/v1/captcha/siteverify", ""),
        ("/v1/risk/query", f"Authorization: {basic(creds['a']['appKey'], creds['a']['serverSecret'])}\r\n"),
    ]:
        for what, body in bodies.items():
            with socket.create_connection((parsed.hostname, parsed.port), timeout=10) as connection:
                connection.sendall(
                    f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n{headers}Transfer-Encoding: chunked\r\n\r\n".encode()
                    + body
                )
                connection.shutdown(socket.SHUT_WR)
                answer = b""
                while True:
                    chunk = connection.recv(65536)
                    if not chunk:
                        break
                    answer += chunk
            status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/1.1 ") else 0
            check(status == 400, f"{label}: POST {path} with a malformed chunked body ({what}) -> 400 ({status})")


def console_session(base, token):
    """Signs in to the console with `token`: the session cookie, and the form token its pages carry."""
    parsed = urllib.parse.urlsplit(base)
    connection = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    body = urllib.parse.urlencode({"token": token})
    connection.request("POST", "/console/sign-in", body, {"Content-Type": "application/x-www-form-urlencoded"})
    response = connection.getresponse()
    response.read()
    assert response.status == 303, response.status
    cookie = response.getheader("Set-Cookie").split(";", 1)[0].split("=", 1)[1]
    connection.request("GET", "/console", headers={"Cookie": f"gatehouse_console={cookie}"})
    page = connection.getresponse().read().decode()
    connection.close()
    csrf = re.search(r'name="csrf" value="([^"]+)"', page).group(1)
    return {"cookie": cookie, "csrf": csrf}


def cli(binary, database_url, *args):
    environment = dict(os.environ, GATEHOUSE_DATABASE_URL=database_url)
    return subprocess.run([binary, *args], env=environment, check=True, capture_output=True, text=True).stdout.strip()


def gate_header_cannot_be_set(nginx, base, creds, workdir):
    """Through the shipped gate config: the client's X-Gatehouse-Authorization never counts."""
    import http.server
    import threading

    class Upstream(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, *args):
            pass

    upstream = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    host = base.split("//", 1)[1].rstrip("/")
    gate_conf = os.path.join(ROOT, "deploy", "nginx", "gatehouse-gate.conf")
    # The proxy's credential is app B's, whose attester gates everything; the client sends app A's.
    app_a, app_b = creds["a"], creds["b"]
    block = f"""
    upstream gatehouse {{ server {host}; }}
    upstream app_api {{ server 127.0.0.1:{upstream.server_address[1]}; }}
    server {{
        LISTEN
        set $gatehouse_gate_credentials "{base64.b64encode(f'{app_b["appKey"]}:{app_b["serverSecret"]}'.encode()).decode()}";
        include {gate_conf};
    }}
"""
    front, stop = run_nginx(nginx, workdir, block)
    try:
        status = send(front, "GET", "/anything", {})
        check(status == 428, f"gate config: B's gated route without a token -> 428 ({status})")
        for header in ("X-Gatehouse-Authorization", "Authorization"):
            status = send(front, "GET", "/anything", {header: basic(app_a["appKey"], app_a["serverSecret"])})
            check(status == 428, f"gate config: a client's {header} with app A's credential does not replace the proxy's ({status})")
        for path in ("/_gatehouse_gate", "//_gatehouse_gate", "/_gatehouse_gate/", "/%5Fgatehouse_gate"):
            status = send(front, "GET", path, {})
            check(status in (404, 428, 400), f"gate config: the internal location {path} is not reachable from outside ({status})")
    finally:
        stop()
        upstream.shutdown()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--admin-token", required=True)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--database-url", required=True)
    parser.add_argument("--nginx")
    args = parser.parse_args()
    base = args.url.rstrip("/")
    admin = {"Authorization": f"Bearer {args.admin_token}"}

    def new_app(name):
        status, _, created = call("POST", f"{base}/v1/admin/apps", {"name": name, "platforms": ["ios"]}, admin)
        assert status == 201, (status, created)
        return {"appKey": created["app"]["appKey"], "serverSecret": created["serverSecret"], "secretKey": created["secretKey"]}

    app_a, app_b, disabled = new_app("Guard A"), new_app("Guard B"), new_app("Guard disabled")
    status, _, _ = call("POST", f"{base}/v1/admin/apps/{disabled['appKey']}/disable", None, admin)
    assert status == 200, status
    # App B's attester gates every route, for the gate config's check.
    status, _, body = call(
        "POST",
        f"{base}/v1/admin/apps/{app_b['appKey']}/attesters",
        {"attestId": "guard-all", "routes": [{"method": "*", "pathPrefix": "/"}]},
        admin,
    )
    assert status == 201, (status, body)
    name = f"guard-revoked-{int(time.time())}"
    revoked = cli(args.binary, args.database_url, "admin-token", "create", "--name", name)
    revoked_console = console_session(base, revoked)
    cli(args.binary, args.database_url, "admin-token", "revoke", "--name", name)
    viewer = cli(args.binary, args.database_url, "admin-token", "create", "--name", f"guard-viewer-{int(time.time())}", "--role", "viewer")
    creds = {
        "admin": args.admin_token, "revoked": revoked, "viewer": viewer, "a": app_a, "b": app_b, "disabled": disabled,
        "console": console_session(base, args.admin_token), "viewer_console": console_session(base, viewer), "revoked_console": revoked_console,
    }
    values = {
        "appKey": app_a["appKey"], "kind": "server", "eventId": "3300", "deviceId": "d" * 32, "entryId": "1",
        "decisionId": "dec_x", "roleId": "uploads", "attestId": "login-pow", "challengeId": "c" * 32,
    }
    routes = Routes(os.path.join(ROOT, "openapi.yaml"))

    if args.nginx:
        with tempfile.TemporaryDirectory() as workdir:
            host = base.split("//", 1)[1]
            proxy_conf = os.path.join(ROOT, "deploy", "nginx", "gatehouse-proxy.conf")
            block = f"upstream gatehouse {{ server {host}; }}\n    server {{\n        LISTEN\n        include {proxy_conf};\n    }}"
            front, stop = run_nginx(args.nginx, workdir, block)
            try:
                # Directly and through nginx at once: each is one request at a time, and the server has
                # a core for each (12,000-odd requests apiece, a minute and a half of CI one after the other).
                with concurrent.futures.ThreadPoolExecutor(2) as pool:
                    enumerations = [pool.submit(enumerate_routes, base, "direct", routes, creds, values),
                                    pool.submit(enumerate_routes, front, "nginx gatehouse-proxy.conf", routes, creds, values)]
                    for enumeration in enumerations:
                        enumeration.result()
            finally:
                stop()
        with tempfile.TemporaryDirectory() as workdir:
            gate_header_cannot_be_set(args.nginx, base, creds, workdir)
    else:
        enumerate_routes(base, "direct", routes, creds, values)
    malformed_chunks(base, "direct", creds)
    finish("route guard")


if __name__ == "__main__":
    main()
