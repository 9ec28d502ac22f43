"""A small harness for the access matrix: one livebind-server process, plain HTTP requests, event
streams read for a bounded time, HS256 JWTs made with the standard library.

No dependency beyond the standard library (pytest runs it): the server and plain requests come from
Tests/support/livebind_server.py, streams are read over a raw socket so that a stream can be read for
a fixed time without a client library's buffering.
"""
import base64
import hashlib
import hmac
import json
import pathlib
import socket
import sys
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
import livebind_server  # noqa: E402
from livebind_server import ROOT, Answer  # noqa: E402,F401  (ROOT: test_matrix.py)

TIMEOUT = livebind_server.TIMEOUT


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def make_jwt(secret, claims):
    """An HS256 JWT over `claims`, signed with `secret` (bytes)."""
    header = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}, separators=(",", ":")).encode())
    payload = b64url(json.dumps(claims, separators=(",", ":")).encode())
    signing_input = f"{header}.{payload}".encode()
    signature = hmac.new(secret, signing_input, hashlib.sha256).digest()
    return f"{header}.{payload}.{b64url(signature)}"


class Server(livebind_server.Server):
    """One livebind-server on 127.0.0.1 and a free port (`--no-demo` and `args`), its output appended
    to `log_path`; `stop()` ends it by its pid and closes the log."""

    def __init__(self, args, log_path):
        super().__init__(["--no-demo"] + list(args), log=log_path)

    def stop(self):
        self.close()

    def request(self, method, path, body=None, content_type=None, headers=None):
        """Sends one request on a new connection. `body`: bytes, str, or any JSON value."""
        data = None
        if body is not None:
            data = body if isinstance(body, bytes) else body.encode() if isinstance(body, str) else json.dumps(body).encode()
        elif method in ("POST", "PUT", "PATCH"):
            data = b""
        all_headers = dict(headers or {})
        if content_type and data is not None:
            all_headers["Content-Type"] = content_type
        return livebind_server.request(self.port, method, path, data, all_headers, TIMEOUT)


class StreamReader(threading.Thread):
    """Reads one `GET` (an event stream, or a refusal) over a raw socket until `stop` is set or the
    deadline passes. `ready` is set once the status line and headers are in (or the connection ended)."""

    def __init__(self, port, path, headers, deadline):
        super().__init__(daemon=True)
        self.port, self.path, self.headers, self.deadline = port, path, headers, deadline
        self.raw = b""
        self.error = None
        self.ready = threading.Event()
        self.stop = threading.Event()

    def run(self):
        try:
            with socket.create_connection(("127.0.0.1", self.port), timeout=TIMEOUT) as sock:
                lines = [f"GET {self.path} HTTP/1.1", f"Host: 127.0.0.1:{self.port}", "Accept: text/event-stream",
                         "Connection: close"] + [f"{k}: {v}" for k, v in self.headers.items()]
                sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode())
                sock.settimeout(0.05)
                while time.monotonic() < self.deadline and not self.stop.is_set():
                    try:
                        chunk = sock.recv(65536)
                    except socket.timeout:
                        continue
                    if not chunk:
                        break
                    self.raw += chunk
                    if b"\r\n\r\n" in self.raw:
                        self.ready.set()
                        if self.complete():
                            break
        except OSError as error:
            self.error = error
        finally:
            self.ready.set()

    def complete(self):
        """Whether a refusal with a Content-Length has all its body (an event stream never does)."""
        head, _, body = self.raw.partition(b"\r\n\r\n")
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                return len(body) >= int(value.strip())
        return False

    def answer(self):
        head, _, body = self.raw.partition(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        try:
            status = int(lines[0].split()[1])
        except (IndexError, ValueError):
            status = 0
        headers = [tuple(part.strip() for part in line.split(":", 1)) for line in lines[1:] if ":" in line]
        if any(k.lower() == "transfer-encoding" and "chunked" in v.lower() for k, v in headers):
            body = dechunk(body)
        return Answer(status, headers, body)


def dechunk(data):
    """The payload of a chunked body, as far as it arrived (a stream is cut off mid-chunk)."""
    out = b""
    while data:
        size_line, separator, rest = data.partition(b"\r\n")
        if not separator:
            break
        try:
            size = int(size_line.split(b";")[0], 16)
        except ValueError:
            break
        if size == 0:
            break
        out += rest[:size]
        data = rest[size + 2:]
    return out


def read_streams(port, requests, seconds, between=None):
    """Opens every `(path, headers)` of `requests` at once, waits (bounded) until each has its headers,
    runs `between()` (a write to the canary models), reads `seconds` more; returns one Answer each."""
    deadline = time.monotonic() + seconds + 10
    readers = [StreamReader(port, path, headers, deadline) for path, headers in requests]
    for reader in readers:
        reader.start()
    ready_by = time.monotonic() + 5
    for reader in readers:
        reader.ready.wait(max(0.0, ready_by - time.monotonic()))
    time.sleep(0.2)  # the snapshots of the streams that opened are on their way
    if between:
        between()
    time.sleep(seconds)
    for reader in readers:
        reader.stop.set()
    for reader in readers:
        reader.join(timeout=5)
    return [reader.answer() for reader in readers]


class HeldStream:
    """A stream kept open in the background (its id serves `PATCH /events/{stream}`), read and dropped."""

    def __init__(self, port, path, headers, seconds=300):
        self.reader = StreamReader(port, path, headers, time.monotonic() + seconds)
        self.reader.start()

    def stream_id(self, timeout=5):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            text = self.reader.answer().body.decode("utf-8", "replace")
            marker = "event: stream\ndata: "
            if marker in text:
                data = text.split(marker, 1)[1].split("\n", 1)[0]
                return json.loads(data)["stream"]
            time.sleep(0.05)
        raise RuntimeError(f"no stream id on {self.reader.path}: {self.reader.raw[:300]!r}")

    def close(self):
        self.reader.stop.set()
        self.reader.join(timeout=5)


class Credential:
    """One way a caller presents itself, and what the server should make of it.

    `token` goes in `Authorization: Bearer` (or `?access_token=` where a row asks for it), `cookie` in
    `Cookie`; `scopes`/`prefixes` are what it allows when `valid`; `cross_site` headers (`Origin`,
    `Sec-Fetch-Site`) mark a request from another site's page, which may write nothing."""

    def __init__(self, name, token=None, cookie=None, scopes=(), prefixes=None, valid=True, cross_site=None):
        self.name, self.token, self.cookie = name, token, cookie
        self.scopes, self.prefixes, self.valid, self.cross_site = set(scopes), prefixes, valid, cross_site or {}

    @property
    def presented(self):
        return self.token is not None or self.cookie is not None

    def covers(self, model):
        return self.prefixes is None or any(model.startswith(p) for p in self.prefixes)

    def headers(self, token_in_query=False):
        headers = {}
        if self.token is not None and not token_in_query:
            headers["Authorization"] = f"Bearer {self.token}"
        if self.cookie is not None:
            headers["Cookie"] = f"livebind_session={self.cookie}"
        headers.update(self.cross_site)
        return headers


NOBODY = Credential("none")
