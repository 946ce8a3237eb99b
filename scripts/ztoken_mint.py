#!/usr/bin/env python3
"""Mints a ztoken as a device does (docs/sdk-protocol.md, "ztokens: minted on the device"): a
reference for SDK authors in other languages, independent of the Swift code.

    ztoken_mint.py ZTOKEN_KEY ZTOKEN_CONTEXT EVENT ACCOUNT [--ttl 300] [--offset SECONDS]
    ztoken_mint.py --vector      # prints the documented test vector

ZTOKEN_KEY and ZTOKEN_CONTEXT are device start's `ztokenKey` and `ztokenContext` (base64url);
--offset is device start's `serverTime` minus the device's clock, in seconds.
"""
import argparse
import base64
import hashlib
import hmac
import os
import struct
import time


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unb64url(text):
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def mint(key, context, event, account, ttl, issued_at, token_id, version=2):
    assert len(key) == 32 and len(context) == 24 and len(token_id) == 12 and 3300 <= event <= 3555
    account_tag = hmac.new(key, b"account:" + account.encode(), hashlib.sha256).digest()[:8]
    body = bytes([version]) + token_id + struct.pack(">IH", issued_at, ttl) + bytes([event - 3300]) + account_tag + context
    return b64url(body + hmac.new(key, body, hashlib.sha256).digest()[:16])


# The test vector of docs/sdk-protocol.md (Tests/GatehouseCoreTests checks the Swift side against it).
VECTOR = dict(key=bytes(range(1, 33)), context=bytes(range(100, 124)), event=3348, account="10538532", ttl=300,
              issued_at=1_800_000_000, token_id=bytes([7] * 12))


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("key", nargs="?")
    parser.add_argument("context", nargs="?")
    parser.add_argument("event", nargs="?", type=int)
    parser.add_argument("account", nargs="?")
    parser.add_argument("--ttl", type=int, default=300)
    parser.add_argument("--offset", type=float, default=0.0)
    parser.add_argument("--vector", action="store_true")
    arguments = parser.parse_args()
    if arguments.vector:
        print(mint(**VECTOR))
        return
    print(mint(unb64url(arguments.key), unb64url(arguments.context), arguments.event, arguments.account, arguments.ttl,
               int(time.time() + arguments.offset), os.urandom(12)))


if __name__ == "__main__":
    main()
