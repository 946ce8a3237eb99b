"""What every interop script shares: a check that records failures, a JSON/form HTTP call, a timed
request for load clients, stopping a process, the exit, and a PNG decoder for the captcha's images."""
import base64
import json
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import zlib

FAILURES = []
# How long a load client waits for one answer before it counts the request as left hanging.
CLIENT_WAIT = 30


class ClientThreads:
    """`count` client threads, each running `self.client(index)` until `stop`; the answers they record
    go to `self.answers` under `self.lock`."""

    def __init__(self, count, wait):
        import threading

        self.answers = []
        self.lock = threading.Lock()
        self.running = True
        self.wait = wait
        self.threads = [threading.Thread(target=self.client, args=(index,), daemon=True) for index in range(count)]

    def client(self, index):
        raise NotImplementedError

    def start(self):
        for thread in self.threads:
            thread.start()

    def stop(self):
        self.running = False
        for thread in self.threads:
            thread.join(self.wait * 3)


def request(method, url, body=None, headers=None):
    """(status, headers, seconds); status 0 when no answer came within CLIENT_WAIT."""
    data = json.dumps(body).encode() if body is not None else None
    started = time.monotonic()
    call = urllib.request.Request(url, data=data, method=method, headers=dict(headers or {}))
    if data is not None:
        call.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(call, timeout=CLIENT_WAIT) as response:
            payload = response.read()
            return response.status, dict(response.headers), time.monotonic() - started, payload
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), time.monotonic() - started, error.read()
    except (TimeoutError, socket.timeout):
        return 0, {}, time.monotonic() - started, b""
    except (urllib.error.URLError, ConnectionError) as error:
        reason = getattr(error, "reason", error)
        if isinstance(reason, (TimeoutError, socket.timeout)):
            return 0, {}, time.monotonic() - started, b""
        return -1, {}, time.monotonic() - started, str(reason).encode()


def stop_process(process, wait=10):
    """SIGTERM, then SIGKILL if it has not exited after `wait` seconds."""
    process.terminate()
    try:
        process.wait(wait)
    except subprocess.TimeoutExpired:
        process.kill()


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
            return response.status, dict(response.headers), parsed(response.read())
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), parsed(error.read())


def parsed(raw):
    """JSON when the answer is JSON; text otherwise (metrics, a page)."""
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return raw.decode(errors="replace")


def free_port():
    """A port on 127.0.0.1 that nothing listens on right now."""
    import socket

    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


def run_nginx(nginx, workdir, servers, ready_path="/health/live"):
    """Starts a real nginx from `workdir` with `servers` as its http block's content (LISTEN marks
    where the listening address goes), waits until it answers `ready_path`, and returns its URL and a
    function that stops it."""
    import os
    import subprocess
    import time

    port = free_port()
    os.makedirs(os.path.join(workdir, "logs"), exist_ok=True)
    conf = f"""
worker_processes 1;
pid {workdir}/nginx.pid;
error_log {workdir}/logs/error.log warn;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {workdir}/body; proxy_temp_path {workdir}/proxy;
    fastcgi_temp_path {workdir}/fastcgi; uwsgi_temp_path {workdir}/uwsgi; scgi_temp_path {workdir}/scgi;
    {servers.replace("LISTEN", f"listen 127.0.0.1:{port};")}
}}
"""
    path = os.path.join(workdir, "nginx.conf")
    with open(path, "w") as handle:
        handle.write(conf)
    subprocess.run([nginx, "-t", "-p", workdir, "-c", path], check=True, capture_output=True)
    subprocess.run([nginx, "-p", workdir, "-c", path], check=True)
    for _ in range(50):
        try:
            call("GET", f"http://127.0.0.1:{port}{ready_path}")
            break
        except OSError:
            time.sleep(0.1)
    return f"http://127.0.0.1:{port}", lambda: subprocess.run([nginx, "-p", workdir, "-c", path, "-s", "stop"])


def finish(what):
    """Exits 1 if any check failed."""
    if FAILURES:
        print(f"\n{len(FAILURES)} {what} check(s) failed")
        sys.exit(1)
    print(f"\nall {what} checks passed")


def decode_png(data_url):
    """Decodes the server's PNGs with Python's own zlib (a real inflate), undoing any row filter."""
    data = base64.b64decode(data_url.split(",", 1)[1])
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    position, idat, header = 8, b"", None
    while position < len(data):
        length = int.from_bytes(data[position:position + 4], "big")
        kind, body = data[position + 4:position + 8], data[position + 8:position + 8 + length]
        crc = int.from_bytes(data[position + 8 + length:position + 12 + length], "big")
        assert zlib.crc32(kind + body) == crc, "bad CRC in " + kind.decode()
        if kind == b"IHDR":
            header = body
        elif kind == b"IDAT":
            idat += body
        position += 12 + length
    width, height = int.from_bytes(header[0:4], "big"), int.from_bytes(header[4:8], "big")
    channels = {2: 3, 6: 4}[header[9]]
    raw, stride, rows, previous = zlib.decompress(idat), width * channels, [], bytearray(width * channels)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            left = line[i - channels] if i >= channels else 0
            up, up_left = previous[i], (previous[i - channels] if i >= channels else 0)
            if kind == 1:
                line[i] = (line[i] + left) & 0xFF
            elif kind == 2:
                line[i] = (line[i] + up) & 0xFF
            elif kind == 3:
                line[i] = (line[i] + (left + up) // 2) & 0xFF
            elif kind == 4:
                p = left + up - up_left
                pa, pb, pc = abs(p - left), abs(p - up), abs(p - up_left)
                line[i] = (line[i] + (left if pa <= pb and pa <= pc else up if pb <= pc else up_left)) & 0xFF
        rows.append(line)
        previous = line
    return width, height, channels, rows
