#!/usr/bin/env python3
"""A node's state in memory and its restart: loads livebind-server (--data, --history 0) with models of
about 0.85 MB of rows (objects with the same keys) up to each total size asked, measures its RSS, kills
it with SIGKILL and starts it again on the same data directory: time until /healthz answers, RSS at its
peak while it loads (sampled every 10 ms) and once it answers. Prints a markdown table; the figures are
RSS past an empty server's, so that they compare with the JSON's bytes.

Usage: restart.py [SIZE_MB ...] (default 100 1000); LIVEBIND_SERVER names the binary. Loopback only.
"""
import http.client
import json
import os
import random
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

BINARY = os.environ.get("LIVEBIND_SERVER", ".build/release/livebind-server")
MODEL_BYTES = 850_000


def rss(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    return 0


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(port, data, log):
    """Starts the server; returns (process, seconds until it answered, peak RSS meanwhile)."""
    started = time.monotonic()
    process = subprocess.Popen(
        [BINARY, "--host", "127.0.0.1", "--port", str(port), "--no-demo", "--data", data, "--history", "0",
         "--max-store-size", str(8 << 30)], stdout=log, stderr=subprocess.STDOUT)
    peak = 0
    while time.monotonic() - started < 600:
        if process.poll() is not None:
            raise RuntimeError(f"livebind-server exited with {process.returncode}")
        peak = max(peak, rss(process.pid))
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=1)
            connection.request("GET", "/healthz")
            if connection.getresponse().status == 200:
                return process, time.monotonic() - started, peak
        except OSError:
            pass
        time.sleep(0.01)
    raise RuntimeError("livebind-server did not answer within 600 s")


def document(seed):
    rnd, rows, size = random.Random(seed), [], 0
    while size < MODEL_BYTES:
        row = {"id": len(rows), "name": f"item {rnd.randrange(10**6)}", "price": round(rnd.random() * 100, 2),
               "qty": rnd.randrange(100), "tags": ["a", "b"], "ok": rnd.random() < 0.5}
        rows.append(row)
        size += len(json.dumps(row, separators=(",", ":"))) + 1
    return json.dumps({"rows": rows}, separators=(",", ":")).encode()


def settle(pid):
    time.sleep(2)
    return rss(pid)


def run(megabytes, work):
    data = os.path.join(work, f"data-{megabytes}")
    port = free_port()
    with open(os.path.join(work, f"server-{megabytes}.log"), "ab") as log:
        process, _, _ = start(port, data, log)
        try:
            empty = settle(process.pid)
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=120)
            written, index = 0, 0
            while written < megabytes * 1_000_000:
                body = document(index)
                connection.request("PUT", f"/models/m{index}", body, {"Content-Type": "application/json"})
                answer = connection.getresponse()
                answer.read()
                if answer.status not in (200, 201):
                    raise RuntimeError(f"PUT /models/m{index}: {answer.status}")
                written += len(body)
                index += 1
            running = settle(process.pid) - empty
            process.send_signal(signal.SIGKILL)
            process.wait()
            process, seconds, peak = start(port, data, log)
            restarted = settle(process.pid) - empty
        finally:
            process.send_signal(signal.SIGTERM)
            process.wait()
    mib = lambda b: f"{b / 2**20:,.0f}"
    return (f"| {written / 1e6:,.0f} MB in {index} models | {mib(running)} MiB ({running / written:.2f}×) | "
            f"{seconds:.1f} s | {mib(peak - empty)} MiB ({(peak - empty) / running:.2f}×) | "
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
