"""A server restarted after `kill -9` on its data directory holds no more memory than the one that
wrote the state: its RSS past an empty server's, settled and at its peak while it loads, stays within
1.1 times the writer's (issue 45, item 2), for three shapes of state. It used to hold 1.7 times: the
log's newest commits were parsed a second time for stream resumes, and what loading freed stayed in
the heap. Runs the binary of LIVEBIND_SERVER (else .build/release/livebind-server).

RSS is read from /proc; the peak is the restarted process's high-water mark (VmHWM), which covers its
whole load. The slack of 4 MiB is the allocator's: its arenas and free lists differ between a process
that grew by writes and one that grew by loading.
"""
import http.client
import pathlib
import random
import signal
import sys
import time

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))

import livebind_server  # noqa: E402
from livebind_server import memory  # noqa: E402
from state_shapes import compact, rows  # noqa: E402

BOUND = 1.1
SLACK = 4 << 20


SHAPES = {
    # name: [(model, document)] — about 24 MB of rows, 20,000 small models, 16 MB of long strings
    "rows": lambda: [(f"rows{i}", rows(i, 800_000)) for i in range(30)],
    "small models": lambda: [(f"user{i}", {"name": f"user {i}", "age": i % 90, "online": i % 2 == 0})
                             for i in range(20000)],
    "long strings": lambda: [(f"text{i}", {"body": random.Random(i).choice("abcdef") * 1_000_000})
                             for i in range(16)],
}


def write(server, models):
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    try:
        for name, document in models:
            connection.request("PUT", f"/models/{name}", compact(document), {"Content-Type": "application/json"})
            answer = connection.getresponse()
            answer.read()
            assert answer.status in (200, 201), f"PUT /models/{name}: {answer.status}"
    finally:
        connection.close()


def settled_rss(pid):
    """RSS once it stops moving (at most 3 s)."""
    previous, now = -1, memory(pid)
    for _ in range(30):
        if abs(now - previous) < (256 << 10):
            break
        time.sleep(0.1)
        previous, now = now, memory(pid)
    return now


@pytest.mark.parametrize("shape", list(SHAPES))
def test_a_restarted_server_holds_no_more_than_the_one_that_wrote_its_state(shape, tmp_path):
    data = tmp_path / "data"
    server = livebind_server.Server(["--no-demo", "--data", str(data), "--history", "0"],
                                    log=tmp_path / "server.log", startup=120)
    try:
        server.start()
        empty = settled_rss(server.pid)
        write(server, SHAPES[shape]())
        running = settled_rss(server.pid) - empty
        server.kill(signal.SIGKILL)
        server.start()
        restarted = settled_rss(server.pid) - empty
        peak = memory(server.pid, "VmHWM") - empty
        answer = livebind_server.request(server.port, "GET", "/models")
        assert answer.status == 200
        figures = f"{shape}: running {running >> 20} MiB past empty, restarted {restarted >> 20}, peak {peak >> 20}"
        print(figures)
        assert restarted <= BOUND * running + SLACK, figures
        assert peak <= BOUND * running + SLACK, figures
    finally:
        server.close()
