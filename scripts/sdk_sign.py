#!/usr/bin/env python3
"""Reference signer for Gatehouse's /v1/sdk requests (docs/sdk-protocol.md), usable as a library or CLI.

    sdk_sign.py APPKEY SECRETKEY METHOD PATH BODY  -> prints the four headers
"""
import base64
import hashlib
import hmac
import secrets
import sys
import time


def sign(app_key: str, secret_key: str, method: str, path: str, body: bytes, timestamp: int | None = None, nonce: str | None = None) -> dict:
    timestamp = int(time.time()) if timestamp is None else timestamp
    nonce = nonce or secrets.token_urlsafe(24)
    canonical = "\n".join([method.upper(), path, str(timestamp), nonce, hashlib.sha256(body).hexdigest()])
    mac = hmac.new(secret_key.encode(), canonical.encode(), hashlib.sha256).digest()
    return {
        "X-Gatehouse-AppKey": app_key,
        "X-Gatehouse-Timestamp": str(timestamp),
        "X-Gatehouse-Nonce": nonce,
        "X-Gatehouse-Signature": base64.urlsafe_b64encode(mac).rstrip(b"=").decode(),
    }


if __name__ == "__main__":
    app_key, secret_key, method, path, body = sys.argv[1:6]
    for name, value in sign(app_key, secret_key, method, path, body.encode()).items():
        print(f"{name}: {value}")
