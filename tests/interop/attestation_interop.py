#!/usr/bin/env python3
"""Client attestation against a running Gatehouse, checked with third-party peers:

- the `altcha` package (PyPI 2.3.0) solves Gatehouse's challenges (classic and v2) and verifies a
  solution Gatehouse accepted, with the same HMAC key (derived from the master key);
- PyJWT verifies the issued tokens from the JWKS URL alone, including the `pay` binding, and HS256
  tokens with the attester's shared secret;
- a real nginx (auth_request, deploy/nginx/gatehouse-gate.conf) in front of a tiny upstream turns
  the gate's answers into 428 + EO-Attest-Challenge, 200 from the upstream, and 428 again for a
  wrong bound value, a used-up limited-use token and an expired token.

    attestation_interop.py --url http://127.0.0.1:8080 --admin-token gat_... --master-key BASE64 [--nginx /usr/sbin/nginx]
"""
import argparse
import base64
import hashlib
import http.server
import json
import os
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

import altcha.v1 as altcha_v1
import altcha.v2 as altcha_v2
import jwt
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
from sdk_sign import sign  # noqa: E402
from interop_common import call, check, finish, run_nginx  # noqa: E402

class Gatehouse:
    def __init__(self, url, admin_token):
        self.url = url.rstrip("/")
        self.admin = {"Authorization": f"Bearer {admin_token}"}

    def admin_call(self, method, path, body=None):
        return call(method, self.url + path, body, self.admin)

    def create_app(self, name):
        status, _, created = self.admin_call("POST", "/v1/admin/apps", {"name": name, "platforms": ["ios"]})
        assert status == 201, created
        return created

    def sdk(self, app, method, path, body=None):
        raw = b"" if body is None else json.dumps(body).encode()
        headers = sign(app["app"]["appKey"], app["secretKey"], method, path, raw)
        if body is not None:
            headers["Content-Type"] = "application/json"
        request = urllib.request.Request(self.url + path, data=raw if body is not None else None, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=30) as response:
                return response.status, json.loads(response.read() or b"null")
        except urllib.error.HTTPError as error:
            return error.code, json.loads(error.read() or b"null")

    def backend(self, app):
        token = base64.b64encode(f'{app["app"]["appKey"]}:{app["serverSecret"]}'.encode()).decode()
        return {"Authorization": f"Basic {token}"}


def altcha_key(master_key_b64, app_key):
    derived = HKDF(algorithm=hashes.SHA256(), length=32, salt=None, info=f"gatehouse:altcha-hmac-v1:{app_key}".encode()).derive(
        base64.b64decode(master_key_b64)
    )
    return derived.hex()


def solve(gh, app, attest_id, device_id):
    """Fetches a challenge and solves it with the altcha package's own solver; returns the widget payload."""
    status, answer = gh.sdk(app, "POST", "/v1/attest/challenges", {"attestId": attest_id, "deviceId": device_id})
    assert status == 200, answer
    challenge = answer["challenge"]
    if answer["format"] == "altcha-v1":
        parsed = altcha_v1.Challenge(challenge["algorithm"], challenge["challenge"], challenge["maxnumber"], challenge["salt"], challenge["signature"])
        solution = altcha_v1.solve_challenge(parsed)
        assert solution is not None, "altcha v1 found no solution"
        payload = altcha_v1.Payload(parsed.algorithm, parsed.challenge, solution.number, parsed.salt, parsed.signature)
        return answer, payload.to_base64(), payload
    parsed = altcha_v2.Challenge.from_dict(challenge)
    solution = altcha_v2.solve_challenge(parsed)
    assert solution is not None, "altcha v2 found no solution"
    return answer, altcha_v2.Payload(parsed, solution).to_base64(), None


def redeem(gh, app, attest_id, device_id, payload, pay=None):
    body = {"attestId": attest_id, "deviceId": device_id, "payload": payload}
    if pay:
        body["pay"] = pay
    return gh.sdk(app, "POST", "/v1/attest/tokens", body)


def binding(value):
    return base64.b64encode(hashlib.sha256(value.encode()).digest()).decode()


class Upstream(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"upstream": "ok", "device": self.headers.get("X-Gatehouse-Device-Id")}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def start_nginx(nginx, gatehouse_url, app, workdir):
    upstream = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    gate_conf = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "deploy", "nginx", "gatehouse-gate.conf"))
    credentials = base64.b64encode(f'{app["app"]["appKey"]}:{app["serverSecret"]}'.encode()).decode()
    host = gatehouse_url.split("//", 1)[1].rstrip("/")
    servers = f"""
    upstream gatehouse {{ server {host}; }}
    upstream app_api {{ server 127.0.0.1:{upstream.server_address[1]}; }}
    server {{
        LISTEN
        set $gatehouse_gate_credentials "{credentials}";
        include {gate_conf};
    }}
"""
    url, stop = run_nginx(nginx, workdir, servers, ready_path="/health")
    return url, lambda: (stop(), upstream.shutdown())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--admin-token", required=True)
    parser.add_argument("--master-key", required=True)
    parser.add_argument("--nginx")
    args = parser.parse_args()
    gh = Gatehouse(args.url, args.admin_token)

    app = gh.create_app("Attestation interop")
    other = gh.create_app("Another app")
    app_key = app["app"]["appKey"]
    status, started = gh.sdk(app, "POST", "/v1/sdk/device/start", {"deviceId": "interop-device-1", "collectType": 7})
    assert status == 200, started
    device = started["deviceId"]

    status, _, created = gh.admin_call(
        "POST",
        f"/v1/admin/apps/{app_key}/attesters",
        {
            "attestId": "login-pow",
            "pow": {"format": "altcha-v1", "maxNumber": 5000},
            "tokenLifetimeSeconds": 60,
            "bindHeader": "Authorization",
            "routes": [{"method": "*", "pathPrefix": "/api/"}],
        },
    )
    check(status == 201, f"create a classic PoW attester ({status})")
    gh.admin_call("POST", f"/v1/admin/apps/{app_key}/attesters", {"attestId": "pay-v2", "pow": {"format": "altcha-v2", "cost": 50, "keyPrefix": "0"}})
    gh.admin_call(
        "POST",
        f"/v1/admin/apps/{app_key}/attesters",
        {"attestId": "once", "pow": {"maxNumber": 1000}, "maxUses": 1, "routes": [{"method": "GET", "pathPrefix": "/api/once/"}]},
    )
    status, _, hs = gh.admin_call("POST", f"/v1/admin/apps/{app_key}/attesters", {"attestId": "legacy-hs", "algorithm": "HS256", "pow": {"maxNumber": 1000}})
    check(status == 201 and hs.get("sharedSecret"), "an HS256 attester comes with its shared secret, once")

    # The altcha package solves Gatehouse's classic challenge, and verifies what Gatehouse accepted.
    answer, payload, parsed = solve(gh, app, "login-pow", device)
    check(answer["format"] == "altcha-v1" and answer["challenge"]["salt"].endswith("&"), "classic challenge, salt ends with the splice delimiter")
    status, issued = redeem(gh, app, "login-pow", device, payload, pay=binding("Bearer user-1"))
    check(status == 200 and issued["tokenHeader"] == "EO-Attest-Token", f"altcha's v1 solution earns a token ({status} {issued})")
    key = altcha_key(args.master_key, app_key)
    verified, error = altcha_v1.verify_solution(payload, key)
    check(verified and error is None, "altcha.v1.verify_solution accepts the solution Gatehouse accepted, with the derived key")
    status, again = redeem(gh, app, "login-pow", device, payload)
    check(status == 400 and again.get("reason") == "solution_reused", f"a solved challenge is accepted once ({status} {again})")

    # CVE-2025-68113: shift digits between the salt and the number; hash and signature still match.
    # The number after the move must keep its digits: at least two, and no leading zero left behind
    # (105 would become salt+"1" and 5, which hashes "...15", not "...105").
    digits = str(parsed.number)
    while len(digits) < 2 or digits[1] == "0":
        _, payload2, parsed = solve(gh, app, "login-pow", device)
        digits = str(parsed.number)
    spliced = altcha_v1.Payload(parsed.algorithm, parsed.challenge, int(digits[1:]), parsed.salt + digits[0], parsed.signature)
    check(
        hashlib.sha256((spliced.salt + str(spliced.number)).encode()).hexdigest() == parsed.challenge,
        "the spliced payload still hashes to the signed challenge",
    )
    status, refused = redeem(gh, app, "login-pow", device, spliced.to_base64())
    check(status == 400 and refused.get("reason") == "invalid_pow_payload", f"CVE-2025-68113 splice refused ({status} {refused})")

    # PyJWT verifies from the JWKS URL alone, with the binding.
    jwks = jwt.PyJWKClient(gh.url + "/.well-known/jwks.json")
    token = issued["token"]
    signing_key = jwks.get_signing_key_from_jwt(token)
    claims = jwt.decode(token, signing_key.key, algorithms=["ES256"], audience=app_key, issuer="gatehouse")
    check(claims["did"] == device and claims["sub"] == device and claims["attestId"] == "login-pow", "PyJWT verifies the token with the JWKS")
    check(claims["pay"] == binding("Bearer user-1"), "the pay claim is base64(SHA-256(bound value))")
    check(jwt.get_unverified_header(token)["kid"] == signing_key.key_id, "the token names its kid")

    # v2 (PBKDF2) with the altcha package's solver and verifier.
    answer, payload_v2, _ = solve(gh, app, "pay-v2", device)
    check(answer["challenge"]["parameters"]["algorithm"] == "PBKDF2/SHA-256", "v2 challenge is PBKDF2/SHA-256")
    status, issued_v2 = redeem(gh, app, "pay-v2", device, payload_v2)
    check(status == 200, f"altcha's v2 solution earns a token ({status})")
    result = altcha_v2.verify_solution(payload_v2, key)
    check(result.verified, "altcha.v2.verify_solution accepts the v2 solution Gatehouse accepted")

    # HS256 with the attester's shared secret, as a backend verifying Approov tokens does.
    _, payload_hs, _ = solve(gh, app, "legacy-hs", device)
    status, issued_hs = redeem(gh, app, "legacy-hs", device, payload_hs)
    hs_claims = jwt.decode(issued_hs["token"], base64.b64decode(hs["sharedSecret"]), algorithms=["HS256"], audience=app_key)
    check(hs_claims["attestId"] == "legacy-hs", "PyJWT verifies an HS256 token with the shared secret")

    # Introspection refuses alg none, an unknown kid and another app's token.
    header = base64.urlsafe_b64encode(b'{"alg":"none","typ":"JWT"}').rstrip(b"=").decode()
    body = token.split(".")[1]
    for label, candidate, reason, creds in [
        ("alg none", f"{header}.{body}.", "unsupported_algorithm", gh.backend(app)),
        (
            "unknown kid",
            base64.urlsafe_b64encode(b'{"alg":"ES256","kid":"nope","typ":"JWT"}').rstrip(b"=").decode() + "." + body + "." + token.split(".")[2],
            "unknown_key",
            gh.backend(app),
        ),
        ("another app's token", token, "wrong_app", gh.backend(other)),
    ]:
        status, _, answer = call("POST", gh.url + "/v1/attest/introspect", {"token": candidate}, creds)
        check(status == 200 and answer == {"active": False, "reason": reason}, f"introspection: {label} -> {reason} ({answer})")
    status, _, answer = call("POST", gh.url + "/v1/attest/introspect", {"token": token, "boundValue": "Bearer user-1"}, gh.backend(app))
    check(status == 200 and answer["active"] and answer["claims"]["pay"] == binding("Bearer user-1"), "introspection: a good token is active")

    # Rotation: the old token still verifies from the JWKS; a new token names the new kid.
    status, _, rotated = gh.admin_call("POST", "/v1/admin/signing-keys/rotate")
    check(status == 201 and rotated["kid"] != signing_key.key_id, "rotate the signing key")
    fresh = jwt.PyJWKClient(gh.url + "/.well-known/jwks.json")
    jwt.decode(token, fresh.get_signing_key_from_jwt(token).key, algorithms=["ES256"], audience=app_key)
    check(True, "a token signed before the rotation still verifies from the JWKS")
    time.sleep(1.1)  # the rotating instance reloads at once; other instances within 30 s
    _, payload_new, _ = solve(gh, app, "pay-v2", device)
    _, issued_new = redeem(gh, app, "pay-v2", device, payload_new)
    check(jwt.get_unverified_header(issued_new["token"])["kid"] == rotated["kid"], "a token signed after the rotation names the new kid")
    jwt.decode(issued_new["token"], fresh.get_signing_key_from_jwt(issued_new["token"]).key, algorithms=["ES256"], audience=app_key)

    if args.nginx:
        with tempfile.TemporaryDirectory() as workdir:
            front, stop = start_nginx(args.nginx, gh.url, app, workdir)
            try:
                # A token to check for expiry at the end (60 s lifetime, the minimum).
                _, payload_old, _ = solve(gh, app, "login-pow", device)
                _, expiring = redeem(gh, app, "login-pow", device, payload_old, pay=binding("Bearer user-1"))
                expiring_at = time.time() + 60

                status, headers, body = call("GET", front + "/api/data")
                check(status == 428 and headers.get("EO-Attest-Challenge") == "login-pow", f"nginx: no token -> 428 with EO-Attest-Challenge ({status})")
                _, payload_gate, _ = solve(gh, app, headers.get("EO-Attest-Challenge", "login-pow"), device)
                _, fresh_token = redeem(gh, app, "login-pow", device, payload_gate, pay=binding("Bearer user-1"))
                good = {"EO-Attest-Token": fresh_token["token"], "Authorization": "Bearer user-1"}
                status, _, body = call("GET", front + "/api/data", headers=good)
                check(status == 200 and body["upstream"] == "ok" and body["device"] == device, f"nginx: retry with the token -> 200 from the upstream ({status})")
                # Through the shipped config (HTTP/1.1, no "Connection: close") the gate lets a token it
                # has verified through from memory, on the event loop (docs/attestation.md).
                remembered = 0
                for _ in range(10):
                    status, _, _ = call("GET", front + "/api/data", headers=good)
                    metrics = call("GET", gh.url + "/metrics")[2]
                    remembered = sum(float(line.rsplit(" ", 1)[1]) for line in metrics.splitlines()
                                     if line.startswith('gatehouse_answers_in_memory_total{route="/v1/gate/verify"}'))
                    if status != 200 or remembered > 0:
                        break
                check(status == 200 and remembered > 0, f"nginx: the gate answers a token it verified from memory ({status}, {remembered:.0f})")
                status, headers, _ = call("GET", front + "/api/data", headers={**good, "Authorization": "Bearer user-2"})
                check(
                    status == 428 and headers.get("X-Gatehouse-Attest-Reason") == "binding_mismatch",
                    f"nginx: wrong bound value -> 428 ({status} {headers.get('X-Gatehouse-Attest-Reason')})",
                )
                status, _, _ = call("GET", front + "/public/page")
                check(status == 200, "nginx: an ungated route passes without a token")
                _, payload_once, _ = solve(gh, app, "once", device)
                _, once = redeem(gh, app, "once", device, payload_once)
                first, _, _ = call("GET", front + "/api/once/x", headers={"EO-Attest-Token": once["token"]})
                second, headers, _ = call("GET", front + "/api/once/x", headers={"EO-Attest-Token": once["token"]})
                check(
                    first == 200 and second == 428 and headers.get("X-Gatehouse-Attest-Reason") == "used_up",
                    f"nginx: a single-use token opens once ({first}, then {second} {headers.get('X-Gatehouse-Attest-Reason')})",
                )
                time.sleep(max(0, expiring_at - time.time() + 1.5))
                status, headers, _ = call("GET", front + "/api/data", headers={"EO-Attest-Token": expiring["token"], "Authorization": "Bearer user-1"})
                check(status == 428 and headers.get("X-Gatehouse-Attest-Reason") == "expired", f"nginx: expired token -> 428 ({status})")
            finally:
                stop()

    finish("attestation interop")


if __name__ == "__main__":
    main()
