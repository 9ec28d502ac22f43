"""Counterexamples to the unsent-bytes budget found by review, kept as plain tests on a release server.

One stream that read nothing followed 60 nested locations of one model (`sub=m/a`, `sub=m/a/a`, …),
and one JSON Patch added a 900 kB string at the innermost and copied it 15 times: every location's
event carried the whole commit, and on starting over every location's snapshot held it too, so the
server's peak RSS rose by 600 MB with `--max-unsent-bytes` at 1 MiB. A location inside another on one
stream is now refused (422: its changes come with the outer one), and the budget is checked before
each of a stream's frames. The second test bounds the same commit into 60 sibling locations of one
stream (each gets only its own value; the bound is loose: the write's own copies dominate it).
"""
import json
import socket
import time

from harness import Server, memory, request

COUNT = 60


def test_a_location_inside_another_on_one_stream_is_refused():
    server = Server().start()
    try:
        status, _, _ = server.call("PUT", "/models/m", json.dumps({"a": {"a": {}}}).encode())
        assert status == 201
        status, _, body = request(server.port, "GET", "/events?sub=m/a&sub=m/a/a")
        assert status == 422 and "inside m/a" in json.dumps(body), (status, body)
    finally:
        server.close()


def test_one_commit_into_many_locations_of_one_stream_stays_within_the_budget():
    # Without history: its writer's copies of a 14 MB commit (its record, SQLite's copy of it) are the
    # commit's own cost, not the streams' budget this bounds.
    server = Server(extra=["--max-unsent-bytes", str(1 << 20), "--max-streams-per-address", "0", "--history", "0"]).start()
    quiet = socket.socket()
    try:
        status, _, _ = server.call("PUT", "/models/m", json.dumps({f"k{n}": {} for n in range(COUNT)}).encode())
        assert status == 201
        subs = "&".join(f"sub=m/k{n}" for n in range(COUNT))
        quiet.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        quiet.settimeout(10)
        quiet.connect(("127.0.0.1", server.port))
        quiet.sendall(f"GET /events?{subs} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        assert b" 200 " in quiet.recv(64)
        time.sleep(0.3)
        before = memory(server.process.pid, "VmHWM")
        patch = [{"op": "add", "path": "/k0/v", "value": "x" * 900_000}]
        patch += [{"op": "copy", "from": "/k0/v", "path": f"/k{n}/v"} for n in range(1, 16)]
        status, _, _ = server.call("PATCH", "/models/m", json.dumps(patch).encode(), "application/json-patch+json")
        assert status == 200, status
        time.sleep(0.5)
        grown = memory(server.process.pid, "VmHWM") - before
        # The commit itself (its 16 values, their log record and event) and the budget (1 MiB) past it.
        assert grown < 96 << 20, f"peak RSS grew {grown >> 20} MiB"
    finally:
        quiet.close()
        server.close()
