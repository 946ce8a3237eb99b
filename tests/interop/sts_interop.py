#!/usr/bin/env python3
"""STS credential vending against a running Gatehouse, checked with real peers:

- moto's server mode (PyPI) as the AWS STS and S3, with its authentication on: Gatehouse's SigV4
  AssumeRole must verify, the device gets credentials in the OSS SDKs' JSON, boto3 uses them to PUT
  and GET under the account's prefix and is refused where the role's policy says no; a recording
  proxy in front of moto shows the session policy Gatehouse sent (moto ignores it) and counts the
  upstream calls (a second request inside the cache window makes none);
- botocore's generate_presigned_url and oss2's sign_url, given the same credentials and clock,
  write byte for byte the URLs Gatehouse writes; oss2 and Gatehouse's self-signed mode give the
  same Authorization header for the same request;
- a stub Alibaba STS checks Gatehouse's RPC signature with aliyun-python-sdk-core's own composer
  and answers with the documented JSON, which Gatehouse turns into the seed's JSON.

    sts_interop.py --url http://127.0.0.1:8080 --admin-token gat_...
"""
import argparse
import http.server
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from datetime import datetime, timedelta, timezone

import boto3
import botocore.exceptions
import oss2
from aliyunsdkcore.auth.composer import rpc_signature_composer
from botocore.config import Config
from freezegun import freeze_time

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "scripts"))
from attestation_interop import Gatehouse, redeem, solve  # noqa: E402
from ztoken_mint import mint, unb64url  # noqa: E402
from interop_common import call, check, finish, free_port  # noqa: E402

BUCKET = "photos"
# Written with spaces, as people write policies: the form body must carry them as botocore does
# (`+`), which moto requires.
AWS_TEMPLATE = json.dumps(
    {
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject"], "Resource": "arn:aws:s3:::photos/users/${accountId}/*"}],
    },
)
OSS_TEMPLATE = json.dumps(
    {
        "Version": "1",
        "Statement": [{"Effect": "Allow", "Action": ["oss:GetObject", "oss:PutObject"], "Resource": "acs:oss:*:*:photos/users/${accountId}/*"}],
    },
    separators=(",", ":"),
)


def serve(handler):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}"


def reply(handler, status, raw, content_type=None):
    handler.send_response(status)
    if content_type:
        handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(raw)))
    handler.end_headers()
    handler.wfile.write(raw)


class QuietHandler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass


def recording_proxy(target):
    """Forwards every request to `target` unchanged (Host included, so the SigV4 signature still
    holds) and records the forms it carried."""
    seen = []

    class Proxy(QuietHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
            seen.append(dict(urllib.parse.parse_qsl(body.decode(), keep_blank_values=True)))
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("content-length", "connection")}
            request = urllib.request.Request(target + self.path, data=body, method="POST", headers=headers)
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    status, answer = response.status, response.read()
            except urllib.error.HTTPError as error:
                status, answer = error.code, error.read()
            reply(self, status, answer)

    server, url = serve(Proxy)
    return server, url, seen


def alibaba_stub(access_key_id, secret):
    """An Alibaba STS that verifies the RPC signature with the Alibaba SDK's own composer."""
    seen = []
    compose = getattr(rpc_signature_composer, "__compose_string_to_sign")
    signature_of = getattr(rpc_signature_composer, "__get_signature")

    class Stub(QuietHandler):
        def do_POST(self):
            body = self.rfile.read(int(self.headers.get("Content-Length", 0))).decode()
            params = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(self.path).query, keep_blank_values=True))
            params.update(urllib.parse.parse_qsl(body, keep_blank_values=True))
            seen.append(params)
            given = params.pop("Signature", None)
            expected = signature_of(compose("POST", params), secret)
            if params.get("AccessKeyId") != access_key_id or given != expected:
                answer = {"RequestId": "1", "Code": "SignatureDoesNotMatch", "Message": "Specified signature is not matched with our calculation."}
                status = 400
            else:
                expires = datetime.now(timezone.utc) + timedelta(seconds=int(params["DurationSeconds"]))
                answer = {
                    "RequestId": "6894B13B-6D71-4EF5-88FA-F32781734A7F",
                    "AssumedRoleUser": {"Arn": params["RoleArn"] + "/" + params["RoleSessionName"], "AssumedRoleId": "3445:" + params["RoleSessionName"]},
                    "Credentials": {
                        "AccessKeyId": f"STS.interop{len(seen)}",
                        "AccessKeySecret": "wyLTSmsyPGP1ohvvw8xYgB29dlGI8KMiH2pK",
                        "SecurityToken": "CAES7QIIARKAAZPlqaN9/ILiQZPS+JDkS=",
                        "Expiration": expires.strftime("%Y-%m-%dT%H:%M:%SZ"),
                    },
                }
                status = 200
            reply(self, status, json.dumps(answer).encode(), "application/json")

    server, url = serve(Stub)
    return server, url, seen


def start_moto():
    """moto_server with authentication on after the 6 set-up calls below."""
    port = free_port()
    env = dict(os.environ, INITIAL_NO_AUTH_ACTION_COUNT="6")
    log = tempfile.NamedTemporaryFile(prefix="moto-", suffix=".log", delete=False)
    process = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)], env=env, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    for _ in range(100):
        try:
            urllib.request.urlopen(url + "/moto-api/", timeout=1)
            break
        except Exception:
            time.sleep(0.1)
    return process, url


def setup_moto(url):
    """The six unauthenticated calls: a user with a key and sts:AssumeRole, a role that trusts it and
    may read and write photos/users/*, and the bucket."""
    admin = dict(aws_access_key_id="AKIAADMIN0000000000", aws_secret_access_key="setup", region_name="us-east-1", endpoint_url=url)
    iam = boto3.client("iam", **admin)
    user = iam.create_user(UserName="gatehouse")["User"]
    key = iam.create_access_key(UserName="gatehouse")["AccessKey"]
    iam.put_user_policy(
        UserName="gatehouse",
        PolicyName="assume",
        PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole", "Resource": "*"}]}),
    )
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": user["Arn"]}, "Action": "sts:AssumeRole"}]}
    role = iam.create_role(RoleName="uploads", AssumeRolePolicyDocument=json.dumps(trust), MaxSessionDuration=7200)["Role"]
    iam.put_role_policy(
        RoleName="uploads",
        PolicyName="users-only",
        PolicyDocument=json.dumps(
            {
                "Version": "2012-10-17",
                "Statement": [{"Effect": "Allow", "Action": ["s3:GetObject", "s3:PutObject"], "Resource": "arn:aws:s3:::photos/users/*"}],
            }
        ),
    )
    boto3.client("s3", **admin).create_bucket(Bucket=BUCKET)
    return key["AccessKeyId"], key["SecretAccessKey"], role["Arn"]


def attested_device(gh, app, account):
    """A started device, vouched for `account` by a risk query, with an attestation token."""
    app_key = app["app"]["appKey"]
    status, _, _ = gh.admin_call("POST", f"/v1/admin/apps/{app_key}/events", {"eventId": 3301, "name": "login"})
    assert status == 201, status
    status, _, _ = gh.admin_call("POST", f"/v1/admin/apps/{app_key}/attesters", {"attestId": "login-pow", "pow": {"maxNumber": 1000}, "adaptive": False})
    assert status == 201, status
    status, started = gh.sdk(app, "POST", "/v1/sdk/device/start", {"deviceId": "sts-interop", "collectType": 7})
    assert status == 200, started
    device = started["deviceId"]
    # Minted in Python from what device start handed over, as an SDK in another language would.
    assert 3301 in started["events"], started
    ztoken = mint(unb64url(started["ztokenKey"]), unb64url(started["ztokenContext"]), 3301, account, started["ztokenTtlSeconds"],
                  int(time.time()), os.urandom(12))
    status, _, decision = call(
        "POST", gh.url + "/v1/risk/query", {"ztoken": ztoken, "eventId": 3301, "accountId": account, "clientIp": "127.0.0.1"}, gh.backend(app)
    )
    assert status == 200 and decision["tokenState"] == "fresh" and decision["decision"] != "reject", decision
    _, payload, _ = solve(gh, app, "login-pow", device)
    status, token = redeem(gh, app, "login-pow", device, payload)
    assert status == 200, token
    return device, {"EO-Attest-Token": token["token"]}


def upstream_calls(gh, provider):
    with urllib.request.urlopen(gh.url + "/metrics", timeout=10) as response:
        text = response.read().decode()
    found = re.search(r'gatehouse_sts_upstream_calls_total\{provider="%s"\} (\d+)' % provider, text)
    return int(found.group(1)) if found else 0


def sts_token(gh, app_key, role, headers, path="/v1/sts/token"):
    return call("GET", f"{gh.url}{path}?appKey={app_key}&roleId={role}", headers=headers)


def presign(gh, app_key, role, headers, **body):
    return call("POST", gh.url + "/v1/storage/presign", dict(appKey=app_key, roleId=role, **body), headers)


def aws_checks(gh, app_key, headers, moto_url):
    access_key, secret, role_arn = setup_moto(moto_url)
    wrong = boto3.client("sts", aws_access_key_id=access_key, aws_secret_access_key="wrong", region_name="us-east-1", endpoint_url=moto_url)
    try:
        wrong.assume_role(RoleArn=role_arn, RoleSessionName="wrong-key")
        check(False, "moto checks signatures (a wrong secret must fail)")
    except botocore.exceptions.ClientError as error:
        check(error.response["Error"]["Code"] == "SignatureDoesNotMatch", "moto's authentication is on: a wrong secret gets SignatureDoesNotMatch")

    proxy, proxy_url, forms = recording_proxy(moto_url)
    role = {
        "roleId": "uploads", "provider": "aws", "stsEndpoint": proxy_url, "region": "us-east-1", "roleArn": role_arn,
        "attestId": "login-pow", "accessKeyId": access_key, "accessKeySecret": secret, "durationSeconds": 1800,
        "maxDurationSeconds": 7200, "policyTemplate": AWS_TEMPLATE, "storageEndpoint": moto_url,
    }
    status, _, created = gh.admin_call("POST", f"/v1/admin/apps/{app_key}/roles", role)
    check(status == 201 and "accessKeySecret" not in created, f"create an aws role; the key is not returned ({status})")

    status, _, refused = sts_token(gh, app_key, "uploads", {})
    check(status == 401 and refused.get("ErrorCode") == "attestation_required", "no attestation token, no credentials")
    before = upstream_calls(gh, "aws")
    status, response_headers, token = sts_token(gh, app_key, "uploads", headers)
    check(status == 200 and token.get("StatusCode") == 200, f"GET /v1/sts/token answers 200 with StatusCode 200 ({status}, {token.get('ErrorCode')})")
    check(set(token) == {"StatusCode", "AccessKeyId", "AccessKeySecret", "Expiration", "SecurityToken"}, "exactly the seed's five fields")
    check(token["AccessKeyId"].startswith("ASIA"), "moto issued temporary credentials (ASIA...) for Gatehouse's SigV4 AssumeRole")
    expires = datetime.strptime(token["Expiration"], "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
    check(expires - datetime.now(timezone.utc) > timedelta(seconds=900), "valid at least 900 s more, in the SDK's date format")
    check(response_headers.get("Cache-Control") == "no-store", "credentials are not cacheable")
    sent = forms[-1] if forms else {}
    check(sent.get("Policy") == AWS_TEMPLATE.replace("${accountId}", "alice"), "the session policy sent upstream is the template rendered for the vouched account")
    check(sent.get("DurationSeconds") == "1800" and sent.get("RoleSessionName", "").startswith("gatehouse-"), "duration and session name as configured")

    status, _, again = sts_token(gh, app_key, "uploads", headers, path="/distribute-token.json")
    check(status == 200 and again["AccessKeyId"] == token["AccessKeyId"], "a second request (the seed's path) gets the cached credentials")
    check(len(forms) == 1 and upstream_calls(gh, "aws") == before + 1, f"one upstream call for two requests ({len(forms)} via the proxy)")

    def s3_client():
        return boto3.client(
            "s3",
            aws_access_key_id=token["AccessKeyId"],
            aws_secret_access_key=token["AccessKeySecret"],
            aws_session_token=token["SecurityToken"],
            region_name="us-east-1",
            endpoint_url=moto_url,
            config=Config(signature_version="s3v4", s3={"addressing_style": "path"}),
        )

    s3 = s3_client()
    s3.put_object(Bucket=BUCKET, Key="users/alice/hello.txt", Body=b"hello from the device")
    body = s3.get_object(Bucket=BUCKET, Key="users/alice/hello.txt")["Body"].read()
    check(body == b"hello from the device", "boto3 PUTs and GETs under the account's prefix with the vended credentials")
    try:
        s3.put_object(Bucket=BUCKET, Key="public/index.html", Body=b"x")
        check(False, "a PUT outside the role's policy is refused")
    except botocore.exceptions.ClientError as error:
        check(error.response["Error"]["Code"] == "AccessDenied", "a PUT outside the role's policy gets AccessDenied")

    # Presigned URLs: botocore, given the same credentials and clock, writes the same bytes.
    for method, operation, extra, params in [
        ("GET", "get_object", {}, {}),
        ("PUT", "put_object", {"contentType": "image/jpeg"}, {"ContentType": "image/jpeg"}),
    ]:
        key = "users/alice/a b+c.jpg"
        status, _, signed = presign(gh, app_key, "uploads", headers, method=method, bucket=BUCKET, key=key, expiresIn=600, **extra)
        check(status == 200, f"presign {method} ({status}, {signed.get('ErrorCode')})")
        url = signed.get("URL", "")
        amz_date = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).get("X-Amz-Date", ["20000101T000000Z"])[0]
        with freeze_time(datetime.strptime(amz_date, "%Y%m%dT%H%M%SZ")):
            reference = s3_client().generate_presigned_url(operation, Params=dict(Bucket=BUCKET, Key=key, **params), ExpiresIn=600)
        check(url == reference, f"presigned {method} URL is byte-identical to botocore's")
    status, _, refused = presign(gh, app_key, "uploads", headers, method="GET", bucket=BUCKET, key="users/bob/a.jpg", expiresIn=600)
    check(status == 403 and refused.get("ErrorCode") == "storage_access_denied", "a URL outside the account's prefix is refused")
    status, _, refused = presign(gh, app_key, "uploads", headers, method="GET", bucket=BUCKET, key="users/alice/a.jpg", expiresIn=1501)
    check(status == 400 and refused.get("ErrorCode") == "invalid_presign_request", "an expiry past the credentials' refresh is refused")

    # A wrong long-term key is moto's SignatureDoesNotMatch, reported without the key.
    gh.admin_call("PATCH", f"/v1/admin/apps/{app_key}/roles/uploads", {"accessKeyId": access_key, "accessKeySecret": "not-the-secret"})
    status, _, refused = sts_token(gh, app_key, "uploads", headers)
    check(
        status == 502 and refused.get("ErrorCode") == "UpstreamRefused" and "SignatureDoesNotMatch" in refused.get("ErrorMessage", ""),
        f"a wrong upstream key is a 502 UpstreamRefused naming the provider's code ({refused})",
    )
    check("not-the-secret" not in json.dumps(refused), "the key is not in the answer")
    proxy.shutdown()


def alibaba_checks(gh, app_key, headers):
    long_term_id, long_term_secret = "LTAI5tInteropKey", "interop-long-term-secret"
    stub, stub_url, calls = alibaba_stub(long_term_id, long_term_secret)
    role = {
        "roleId": "oss-uploads", "provider": "alibaba", "stsEndpoint": stub_url, "region": "cn-hangzhou",
        "roleArn": "acs:ram::1234567890123:role/uploads", "attestId": "login-pow", "accessKeyId": long_term_id,
        "accessKeySecret": long_term_secret, "policyTemplate": OSS_TEMPLATE, "storageEndpoint": "https://oss-cn-hangzhou.aliyuncs.com",
        "selfSigned": True,
    }
    status, _, _ = gh.admin_call("POST", f"/v1/admin/apps/{app_key}/roles", role)
    check(status == 201, f"create an alibaba role ({status})")
    status, _, token = sts_token(gh, app_key, "oss-uploads", headers)
    check(status == 200 and token.get("AccessKeyId", "").startswith("STS.interop"), f"the Alibaba SDK's composer accepts Gatehouse's RPC signature ({status}, {token.get('ErrorCode')})")
    check(set(token) == {"StatusCode", "AccessKeyId", "AccessKeySecret", "Expiration", "SecurityToken"}, "the seed's JSON from the Alibaba answer")
    sent = calls[-1] if calls else {}
    check(sent.get("Policy") == OSS_TEMPLATE.replace("${accountId}", "alice"), "the rendered session policy went upstream")
    check(sent.get("SignatureVersion") == "1.0" and sent.get("SignatureMethod") == "HMAC-SHA1", "SignatureVersion 1.0, HMAC-SHA1")

    # Presigned URLs: oss2's sign_url, with the same credentials and clock, writes the same bytes.
    bucket = oss2.Bucket(oss2.StsAuth(token["AccessKeyId"], token["AccessKeySecret"], token["SecurityToken"]), role["storageEndpoint"], BUCKET)
    for method, extra, oss_headers in [("GET", {}, None), ("PUT", {"contentType": "image/jpeg"}, {"Content-Type": "image/jpeg"})]:
        key = "users/alice/a b+c.jpg"
        status, _, signed = presign(gh, app_key, "oss-uploads", headers, method=method, bucket=BUCKET, key=key, expiresIn=600, **extra)
        url = signed.get("URL", "")
        expires = int(urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).get("Expires", ["0"])[0])
        with freeze_time(datetime.fromtimestamp(expires - 600, timezone.utc)):
            reference = bucket.sign_url(method, key, 600, headers=oss_headers)
        check(status == 200 and url == reference, f"presigned {method} URL is byte-identical to oss2's")

    v4 = oss2.Bucket(
        oss2.StsAuth(token["AccessKeyId"], token["AccessKeySecret"], token["SecurityToken"], auth_version=oss2.AUTH_VERSION_4),
        role["storageEndpoint"],
        BUCKET,
        region="cn-hangzhou",
    )
    for method, extra, oss_headers in [("GET", {}, None), ("PUT", {"contentType": "image/jpeg"}, {"Content-Type": "image/jpeg"})]:
        key = "users/alice/v4 photo.jpg"
        status, _, signed = presign(gh, app_key, "oss-uploads", headers, method=method, bucket=BUCKET, key=key, expiresIn=600, signatureVersion="v4", **extra)
        url = signed.get("URL", "")
        oss_date = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).get("x-oss-date", ["20000101T000000Z"])[0]
        with freeze_time(datetime.strptime(oss_date, "%Y%m%dT%H%M%SZ")):
            reference = v4.sign_url(method, key, 600, headers=oss_headers)
        check(status == 200 and url == reference, f"presigned OSS V4 {method} URL is byte-identical to oss2's V4 auth")

    # Self-signed mode: the Authorization header oss2 computes with the long-term key, for the same request.
    auth = oss2.Auth(long_term_id, long_term_secret)
    for key, allowed in [("users/alice/photo.jpg", True), ("users/bob/photo.jpg", False)]:
        request = oss2.http.Request("PUT", f"https://{BUCKET}.oss-cn-hangzhou.aliyuncs.com/{key}", headers={"Content-Type": "image/jpeg", "x-oss-meta-app": "interop"})
        auth._sign_request(request, BUCKET, key)
        content = auth._ProviderAuth__get_bytes_to_sign(request, BUCKET, key).decode()
        status, _, signed = call("POST", gh.url + "/v1/oss/sign", {"appKey": app_key, "roleId": "oss-uploads", "content": content}, headers)
        if allowed:
            check(status == 200 and signed.get("Authorization") == request.headers["authorization"], f"self-signed Authorization equals oss2's ({status}, {signed.get('ErrorCode')})")
        else:
            check(status == 403 and signed.get("ErrorCode") == "storage_access_denied", "a string for another account's prefix is not signed")
    stub.shutdown()

    # Upstream down: retried, then a 502 in the seed's shape.
    closed = free_port()
    gh.admin_call("PATCH", f"/v1/admin/apps/{app_key}/roles/oss-uploads", {"stsEndpoint": f"http://127.0.0.1:{closed}"})
    status, _, refused = sts_token(gh, app_key, "oss-uploads", headers)
    check(status == 502 and refused.get("ErrorCode") == "UpstreamUnavailable" and refused.get("StatusCode") == 502, "an unreachable STS is a 502 UpstreamUnavailable")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--url", required=True)
    parser.add_argument("--admin-token", required=True)
    args = parser.parse_args()
    gh = Gatehouse(args.url, args.admin_token)
    app = gh.create_app("STS interop")
    app_key = app["app"]["appKey"]
    _, headers = attested_device(gh, app, "alice")

    moto, moto_url = start_moto()
    try:
        aws_checks(gh, app_key, headers, moto_url)
    finally:
        moto.terminate()
        moto.wait(timeout=10)
    alibaba_checks(gh, app_key, headers)
    finish("STS interop")


if __name__ == "__main__":
    main()
