#!/usr/bin/env python3
"""A node's state in memory and its restart: loads livebind-server (--data, --history 0) with models of
about 0.85 MB of rows (objects with the same keys) up to each total size asked, measures its RSS, kills
it with SIGKILL and starts it again on the same data directory: time until /healthz answers, its peak
RSS (VmHWM, which covers the whole load) and its RSS once settled. Prints a markdown table; the figures
are RSS past an empty server's, so that they compare with the JSON's bytes.

Usage: restart.py [SIZE_MB ...] (default 100 1000); LIVEBIND_SERVER names the binary. Loopback only.
"""
import http.client
import pathlib
import shutil
import signal
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[2] / "Tests/support"))

from livebind_server import Server, memory  # noqa: E402
from state_shapes import compact, rows  # noqa: E402

MODEL_BYTES = 850_000


def settle(pid):
    time.sleep(2)
    return memory(pid)


def run(megabytes, work):
    data = pathlib.Path(work) / f"data-{megabytes}"
    server = Server(["--no-demo", "--data", str(data), "--history", "0", "--max-store-size", str(8 << 30)],
                    log=pathlib.Path(work) / f"server-{megabytes}.log", startup=600, stop_timeout=60)
    try:
        server.start()
        empty = settle(server.pid)
        connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=120)
        written, index = 0, 0
        while written < megabytes * 1_000_000:
            body = compact(rows(index, MODEL_BYTES))
            connection.request("PUT", f"/models/m{index}", body, {"Content-Type": "application/json"})
            answer = connection.getresponse()
            answer.read()
            if answer.status not in (200, 201):
                raise RuntimeError(f"PUT /models/m{index}: {answer.status}")
            written += len(body)
            index += 1
        connection.close()
        running = settle(server.pid) - empty
        server.kill(signal.SIGKILL)
        started = time.monotonic()
        server.start()
        seconds = time.monotonic() - started
        restarted = settle(server.pid) - empty
        peak = memory(server.pid, "VmHWM") - empty
    finally:
        server.close()
    mib = lambda b: f"{b / 2**20:,.0f}"
    return (f"| {written / 1e6:,.0f} MB in {index} models | {mib(running)} MiB ({running / written:.2f}×) | "
            f"{seconds:.1f} s | {mib(peak)} MiB ({peak / running:.2f}×) | "
            f"{mib(restarted)} MiB ({restarted / running:.2f}×) |")


def main():
    sizes = [int(a) for a in sys.argv[1:]] or [100, 1000]
    work = tempfile.mkdtemp(prefix="livebind-restart-")
    try:
        print("| state (JSON) | RSS running (× JSON) | restart after kill -9 | peak while loading (× running) "
              "| RSS restarted (× running) |")
        print("|---|---:|---:|---:|---:|")
        for megabytes in sizes:
            print(run(megabytes, work), flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
