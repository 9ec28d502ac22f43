"""What one request may make the server hold or do for a stream (issue 41), on a real server.

- **Snapshots are charged before they are made.** One stream with 64 views of a 15 MB array held
  965 MB unsent with `--max-unsent-bytes` at 32 MiB: admission was checked before the views'
  snapshots existed, and they were then queued whatever their size. Scaled down here: a 2 MB array,
  `--max-unsent-bytes` at 1 MiB, 16 views (then windows, then locations) on one stream's `sub`. The
  request is refused (413 naming `max-unsent-bytes`) before any snapshot is made, and the server's
  peak RSS (`VmHWM`) grows by less than the budget and a margin; a stream whose snapshots fit opens.
- **A view query's work is bounded.** `where=.:in:(…)` with 6,500 values over 300,000 rows cost a
  request thread 20 s. `--max-view-in`, `--max-view-terms` and `--max-view-query-bytes` bound a query
  (422 naming the one passed, for streams and view bindings), so a view of n rows costs at most
  n × `--max-view-terms` comparisons (docs/HTTP.md, "Views"). The CPU the server spends (utime +
  stime from /proc/PID/stat) on the largest query allowed stays under that product at a generous
  2 µs per comparison, and a query past the bounds costs next to nothing.
"""
import json
import os
import socket
import time
import urllib.parse

from harness import Server, SSEConnection, cpu_seconds, memory, request

BUDGET = 1 << 20
ROWS = 500                  # of 4 kB each: a 2 MB array
VIEWS = 16


def open_silent(port, query):
    """`GET /events?query` on a socket that reads nothing past the response head: (socket, status, head)."""
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    s.settimeout(30)
    s.connect(("127.0.0.1", port))
    s.sendall(f"GET /events?{query} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n".encode())
    head = b""
    deadline = time.monotonic() + 30
    while b"\r\n\r\n" not in head and time.monotonic() < deadline:
        chunk = s.recv(4096)
        if not chunk:
            break
        head += chunk
    status = int(head.split(b" ", 2)[1]) if head else 0
    if status != 200 and b"content-length:" in head.lower():
        length = int(head.lower().split(b"content-length:", 1)[1].split(b"\r\n", 1)[0])
        while len(head.split(b"\r\n\r\n", 1)[1]) < length and time.monotonic() < deadline:
            chunk = s.recv(4096)
            if not chunk:
                break
            head += chunk
    return s, status, head


def budget_server():
    return Server(extra=["--max-unsent-bytes", str(BUDGET), "--max-streams-per-address", "0", "--history", "0",
                         "--body-limit", str(8 << 20)]).start()


def assert_refused_within_budget(server, query):
    """Opens one silent stream with `query`: it must be refused with 413 naming the budget, and the
    server's peak RSS must grow by less than the budget and 12 MiB (the request, the views' own
    arrangement, allocator slack); every snapshot made and queued would take 32 MB."""
    time.sleep(0.2)
    before = memory(server.process.pid, "VmHWM")
    quiet, status, head = open_silent(server.port, query)
    try:
        time.sleep(0.5)
        grown = memory(server.process.pid, "VmHWM") - before
        assert grown < BUDGET + (12 << 20), f"peak RSS grew {grown >> 20} MiB (status {status})"
        assert status == 413, (status, head[:600])
        body = json.loads(head.split(b"\r\n\r\n", 1)[1].decode())
        assert body["setting"] == "max-unsent-bytes" and body["limit"] == BUDGET, body
    finally:
        quiet.close()


def rows(count, size):
    return [{"id": f"r{n}", "n": n, "text": "x" * size} for n in range(count)]


def test_many_views_of_one_array_are_refused_before_their_snapshots_are_made():
    server = budget_server()
    try:
        status, _, _ = server.call("PUT", "/models/big", {"rows": rows(ROWS, 4000)})
        assert status == 201
        subs = "&".join("sub=" + urllib.parse.quote(f"big/rows;where=n:ge:{k};order=-n", safe="/;=") for k in range(VIEWS))
        assert_refused_within_budget(server, subs)
        # The budget was given back: a stream whose views fit (4 of 20 rows, about 320 kB) opens and
        # gets every view's snapshot.
        small = "&".join("sub=" + urllib.parse.quote(f"big/rows;where=n:ge:{k};limit=20", safe="/;=") for k in range(4))
        stream = SSEConnection(server.port, small)
        assert stream.status == 200, stream.error_body
        snapshots = []
        deadline = time.monotonic() + 10
        while len(snapshots) < 4 and time.monotonic() < deadline:
            snapshots += [e for e in stream.read(wait=0.5) if e["event"] == "snapshot"]
        stream.close()
        assert len(snapshots) == 4 and all(len(json.loads(e["data"])["value"]) == 20 for e in snapshots), snapshots[:1]
    finally:
        server.close()


def test_many_windows_and_locations_are_refused_before_their_snapshots_are_made():
    server = budget_server()
    try:
        # 16 arrays of 32 rows of 4 kB (128 kB each, 2 MB in all): a window or a location of each.
        status, _, _ = server.call("PUT", "/models/big", {f"a{k}": rows(32, 4000) for k in range(VIEWS)})
        assert status == 201
        assert_refused_within_budget(server, "&".join(f"sub=big/a{k};first=1000" for k in range(VIEWS)))
        assert_refused_within_budget(server, "&".join(f"sub=big/a{k}" for k in range(VIEWS)))
        # A whole model larger than the budget too: its snapshot is measured before it is encoded.
        assert_refused_within_budget(server, "model=big")
        # What fits opens: two windows (256 kB).
        stream = SSEConnection(server.port, "sub=big/a0;first=1000&sub=big/a1;first=1000")
        assert stream.status == 200, stream.error_body
        stream.close()
    finally:
        server.close()


def test_an_in_list_one_past_its_limit_is_refused_naming_the_setting():
    server = Server(extra=["--max-view-in", "8", "--max-view-terms", "12", "--max-view-query-bytes", "400"]).start()
    try:
        status, _, _ = server.call("PUT", "/models/m", {"rows": rows(10, 10)})
        assert status == 201

        def sub(where):
            return "/events?sub=" + urllib.parse.quote("m/rows;where=" + where, safe="/;=")

        def values(count, start=0):
            return ",".join(str(n) for n in range(start, start + count))

        # At each limit: accepted.
        stream = SSEConnection(server.port, sub(f"n:in:({values(8)})")[len("/events?"):])
        assert stream.status == 200, stream.error_body
        stream.close()
        cases = [
            (f"n:in:({values(9)})", "max-view-in", 8),
            (f"or(n:in:({values(8)}),n:in:({values(5, 8)}))", "max-view-terms", 12),
            ("or(" + ",".join(f"n:eq:{n}" for n in range(13)) + ")", "max-view-terms", 12),
            ("text:match:" + "y" * 400, "max-view-query-bytes", 400),
        ]
        for where, setting, limit in cases:
            status, headers, body = request(server.port, "GET", sub(where))
            assert status == 422 and headers["content-type"].startswith("application/problem+json"), (where, status, body)
            assert body["setting"] == setting and body["limit"] == limit and "--" + setting in body["detail"], body
        # A view binding gets the same bounds.
        binding = {"source": "m.rows", "target": "out.v",
                   "transform": {"name": "view", "where": f"n:in:({values(9)})"}}
        status, _, body = server.call("POST", "/bindings", binding)
        assert status == 422 and body["setting"] == "max-view-in" and body["limit"] == 8, (status, body)
        binding["transform"]["where"] = f"n:in:({values(8)})"
        status, _, body = server.call("POST", "/bindings", binding)
        assert status in (200, 201), (status, body)
    finally:
        server.close()


def test_one_view_request_costs_at_most_the_documented_product():
    """Defaults: `--max-view-terms` 256, `--max-view-in` 128. 50,000 rows."""
    count, terms = 50_000, 256
    server = Server(extra=["--history", "0", "--body-limit", str(8 << 20)]).start()
    try:
        items = [{"id": n, "name": f"Name Ä{n}"} for n in range(count)]
        status, _, _ = server.call("PUT", "/models/m", {"rows": items})
        assert status == 201
        # The largest query allowed: two in lists of 128 values that match nothing, and a match.
        lists = [",".join(str(-1 - n - 128 * k) for n in range(128)) for k in range(2)]
        where = f"or(id:in:({lists[0]}),and(id:in:({lists[1][:lists[1].rindex(',')]}),name:match:ä9999))"
        time.sleep(0.2)
        before = cpu_seconds(server.process.pid)
        stream = SSEConnection(server.port, "sub=" + urllib.parse.quote("m/rows;where=" + where, safe="/;="))
        assert stream.status == 200, stream.error_body
        events = []
        deadline = time.monotonic() + 60
        while not any(e["event"] == "snapshot" for e in events) and time.monotonic() < deadline:
            events += stream.read(wait=0.5)
        stream.close()
        spent = cpu_seconds(server.process.pid) - before
        assert any(e["event"] == "snapshot" for e in events)
        # rows × terms comparisons, at a generous 2 µs each (a debug build takes far less), plus 1 s.
        bound = count * terms * 2e-6 + 1
        print(f"one maximal view of {count} rows: {spent:.2f} s of CPU (bound {bound:.1f} s)")
        assert spent < bound, f"{spent:.2f} s of CPU for one maximal view; bound {bound:.1f} s"
        # The reported attack, as a view binding (a where may be 1 MiB): 6,500 values. Refused when
        # parsed: it costs next to nothing (evaluated, it would be 325 million comparisons).
        attack = {"source": "m.rows", "target": "out.v",
                  "transform": {"name": "view", "where": "id:in:(" + ",".join(str(-n) for n in range(1, 6501)) + ")"}}
        before = cpu_seconds(server.process.pid)
        status, _, body = server.call("POST", "/bindings", attack)
        spent = cpu_seconds(server.process.pid) - before
        assert status == 422 and body.get("setting") in ("max-view-query-bytes", "max-view-in"), (status, body)
        print(f"the refused attack: {spent:.2f} s of CPU")
        assert spent < 0.5, f"{spent:.2f} s of CPU to refuse an over-long in list"
    finally:
        server.close()
