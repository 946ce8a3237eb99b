"""What every interop script shares: a check that records failures, a JSON/form HTTP call, the exit."""
import json
import sys
import urllib.error
import urllib.parse
import urllib.request

FAILURES = []


def check(condition, what):
    print(("ok   " if condition else "FAIL ") + what)
    if not condition:
        FAILURES.append(what)


def call(method, url, body=None, headers=None, form=False):
    """Sends `body` as JSON (or form-encoded); returns status, headers and the parsed JSON answer."""
    data = None
    request = urllib.request.Request(url, method=method, headers=headers or {})
    if body is not None:
        if form:
            data = urllib.parse.urlencode(body).encode()
            request.add_header("Content-Type", "application/x-www-form-urlencoded")
        else:
            data = json.dumps(body).encode()
            request.add_header("Content-Type", "application/json")
    request.data = data
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            raw = response.read()
            return response.status, dict(response.headers), (json.loads(raw) if raw else None)
    except urllib.error.HTTPError as error:
        raw = error.read()
        try:
            parsed = json.loads(raw) if raw else None
        except ValueError:
            parsed = raw.decode(errors="replace")
        return error.code, dict(error.headers), parsed


def finish(what):
    """Exits 1 if any check failed."""
    if FAILURES:
        print(f"\n{len(FAILURES)} {what} check(s) failed")
        sys.exit(1)
    print(f"\nall {what} checks passed")
