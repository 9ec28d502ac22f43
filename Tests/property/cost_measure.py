"""Measuring what one request costs the server, against its row of the cost table (docs/HTTP.md,
"What one request may cost", read by `cost_model.py`), for the amplification search (`test_cost.py`).

    measure(server, values, method, target, …)   sends one request (or opens a stream that reads
                                                  nothing), measures it and raises Overspent past its row
    exchange(port, method, target, …)            one request on its own connection, read up to a cap
    template(method, path)                       the table's path of a request's path

What is measured: the bytes on the wire; for a stream, the growth of `livebind_stream_unsent_bytes`
(/metrics) once the server is idle; the growth of the server's peak RSS (VmHWM, reset through
/proc/PID/clear_refs); its CPU time (/proc/PID/stat). The slack is the one docs/HTTP.md states.
"""
import json
import os
import select
import socket
import time
import urllib.parse

import cost_model
from harness import cpu_seconds, memory

KiB, MiB = 1 << 10, 1 << 20
SLACK_BYTES = 16 * KiB
SLACK_MEMORY = 32 * MiB
CPU_FLOOR, CPU_BYTES_PER_SECOND = 1.0, 20_000_000
TABLE = cost_model.rows()

# The limits the server is started with: small, so that amplification shows in megabytes.
SMALL = {
    "max-model-size": 1 * MiB, "max-store-size": 8 * MiB, "body-limit": 256 * KiB,
    "max-unsent-bytes": 1 * MiB, "stream-buffer-limit": 256 * KiB, "retained-bytes": 1 * MiB,
    "max-list-bytes": 64 * KiB, "max-bindings": 200, "checkpoint-bytes": 1 * MiB,
    "history-max-scan": 20_000, "history-max-points": 10_000, "history-max-buckets": 1_000,
    "history-max-bytes": 1 * MiB, "max-view-rows": 400_000,
}


def reset_peak(pid):
    """Resets VmHWM to the current RSS (Linux: writing 5 to clear_refs)."""
    try:
        with open(f"/proc/{pid}/clear_refs", "w") as refs:
            refs.write("5")
        return True
    except OSError:
        return False


def unsent_bytes(port):
    """`livebind_stream_unsent_bytes` from /metrics (0 when it is not there)."""
    answer = exchange(port, "GET", "/metrics", cap=1 * MiB)
    for line in answer["body"].decode("utf-8", "replace").splitlines():
        if line.startswith("livebind_stream_unsent_bytes "):
            return int(float(line.split()[1]))
    return 0


def exchange(port, method, target, body=None, content_type="application/json", cap=64 * MiB, timeout=30):
    """One request on its own connection (`Connection: close`), read to its end or `cap` bytes:
    {"status", "bytes" (all received), "body", "capped"}."""
    data = b"" if body is None else (body if isinstance(body, bytes) else json.dumps(body).encode())
    head = [f"{method} {target} HTTP/1.1", f"Host: 127.0.0.1:{port}", "Connection: close"]
    if body is not None:
        head += [f"Content-Type: {content_type}", f"Content-Length: {len(data)}"]
    sock = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    received, capped, deadline = [], False, time.monotonic() + timeout
    try:
        sock.sendall(("\r\n".join(head) + "\r\n\r\n").encode() + data)
        total = 0
        while time.monotonic() < deadline:
            ready, _, _ = select.select([sock], [], [], max(0.0, deadline - time.monotonic()))
            if not ready:
                break
            chunk = sock.recv(1 << 20)
            if not chunk:
                break
            total += len(chunk)
            if total > cap:
                capped = True
                break
            if sum(len(c) for c in received) < 4 * MiB:     # keep the start, for the status and errors
                received.append(chunk)
    finally:
        sock.close()
    raw = b"".join(received)
    head_bytes, _, body_bytes = raw.partition(b"\r\n\r\n")
    try:
        status = int(head_bytes.split(b" ", 2)[1])
    except (IndexError, ValueError):
        status = 0
    return {"status": status, "bytes": total, "body": body_bytes, "capped": capped}


def open_silent(port, target):
    """A stream that reads nothing: a small receive buffer, never drained."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(10)
    sock.connect(("127.0.0.1", port))
    sock.sendall(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nAccept: text/event-stream\r\n\r\n".encode())
    return sock


class Cost:
    """What one request cost and what its row allows."""

    def __init__(self, request, row, values):
        self.request, self.row, self.values = request, row, values
        self.answered = self.held = self.memory = 0
        self.cpu = 0.0
        self.status = None
        self.capped = False
        self.body = b""

    def bound(self, column):
        return cost_model.evaluate(getattr(self.row, column), self.values)

    def allowed(self):
        """{measure: (limit, what the docs say)} for the measures this row bounds."""
        answers, holds, work = self.bound("answers"), self.bound("holds"), self.bound("work")
        everything = (answers or 0) + (holds or 0) + (work or 0)
        limits = {}
        if answers is not None:
            limits["answered"] = (answers + SLACK_BYTES, f"`{self.row.answers}` + 16 KiB")
        if holds is not None:
            limits["held"] = (holds + SLACK_BYTES, f"`{self.row.holds}` + 16 KiB")
        limits["memory"] = (2 * everything + SLACK_MEMORY, "2 × (answers + holds + work) + 32 MiB")
        limits["cpu"] = (CPU_FLOOR + everything / CPU_BYTES_PER_SECOND, "1 s + 1 s per 20 MB of the bounds")
        return limits

    def check(self):
        for measure, (limit, rule_text) in self.allowed().items():
            value = getattr(self, measure)
            if value > limit:
                named = dict.fromkeys(flag for column in ("answers", "holds", "work")
                                      for flag in cost_model.flags(getattr(self.row, column)))
                settings_text = ", ".join(f"--{flag} {self.values[flag]}" for flag in named)
                pending = (" — PENDING: " + self.row.bounded_by.replace("*pending*: ", "")) if self.row.pending else ""
                shown = f"{value:.2f} s" if measure == "cpu" else f"{value:,} bytes" + (" (capped: more)" if self.capped else "")
                raise overspend(self.row)(
                    f"{self.request} (status {self.status}) {measure} {shown}; docs/HTTP.md "
                    f"'What one request may cost', row `{self.row.request}`, allows {rule_text} = "
                    f"{limit:,.2f} ({settings_text}){pending}", self.row, self)


class Overspent(AssertionError):
    """A request cost more than its row allows; `row` and `cost` say which and how much."""

    def __init__(self, message, row, cost):
        super().__init__(message)
        self.row, self.cost = row, cost


_OVERSPENDS = {}
FOUND = {}      # row → (the first overspending request's message, the steps before it), this run


def overspend(row):
    """The error of one row, a class of its own, so that hypothesis reports each row's first
    counterexample (`report_multiple_bugs`) rather than the first of all."""
    if row.request not in _OVERSPENDS:
        name = "Overspent_" + "".join(c if c.isalnum() else "_" for c in row.request)
        _OVERSPENDS[row.request] = type(name, (Overspent,), {})
    return _OVERSPENDS[row.request]


def measure(server, values, method, target, row_query="", *, body=None, content_type="application/json", stream=False):
    """Sends one request and checks what it cost against its row."""
    path = urllib.parse.urlsplit(target).path
    row = cost_model.row_for(TABLE, method, template(method, path), row_query)
    assert row is not None, f"no row of the cost table for {method} {path} ({row_query})"
    cost = Cost(f"{method} {target[:200]}" + (f" with a {len(body if isinstance(body, bytes) else json.dumps(body)):,}-byte body"
                                           if body is not None else ""), row, values)
    pid, port = server.pid, server.port
    unsent_before = unsent_bytes(port) if stream else 0
    # The peak since the reset; where it cannot be reset, the RSS after (a transient peak is missed).
    peak = "VmHWM" if reset_peak(pid) else "VmRSS"
    rss_before, cpu_before = memory(pid, "VmRSS"), cpu_seconds(pid)
    if stream:
        sock = open_silent(port, target)
        try:
            # Until the server has queued what it will: for 1 s neither the unsent total nor the
            # server's CPU time has moved (it may still be making snapshots), at most 15 s.
            start, last, still, most = time.monotonic(), None, 0, 0
            while time.monotonic() < start + 15 and still < 5:
                time.sleep(0.2)
                now = (unsent_bytes(port), round(cpu_seconds(pid), 2))
                still, last, most = (still + 1 if now == last else 0), now, max(most, now[0])
            cost.held = max(0, most - unsent_before)
            cost.memory = memory(pid, peak) - rss_before
            cost.cpu = cpu_seconds(pid) - cpu_before
        finally:
            sock.close()
        time.sleep(0.2)         # the server notices the close and frees what the stream held
    else:
        cap = (cost.bound("answers") or 0) * 4 + 4 * MiB
        answer = exchange(port, method, target, body, content_type, cap=cap)
        cost.status, cost.answered, cost.capped = answer["status"], answer["bytes"], answer["capped"]
        cost.memory = memory(pid, peak) - rss_before
        cost.cpu = cpu_seconds(pid) - cpu_before
        cost.body = answer["body"]
    cost.check()
    return cost


def template(method, path):
    """The table's path for a request's path: `/models/a/b` is `/models/{name}{pointer}`."""
    parts = path.split("/")
    if len(parts) >= 3 and parts[1] == "models":
        return "/models/{name}{pointer}"
    if len(parts) == 3 and parts[1] == "bindings":
        return "/bindings/{id}"
    if len(parts) == 3 and parts[1] == "events":
        return "/events/{stream}"
    known = {p for _, p in cost_model.routes()} | {"/openapi.json"}
    if path in known:
        return path
    return "/{file}" if method == "GET" else path
