#!/usr/bin/env python3
"""Hold N idle SSE streams open against a server and measure what they cost it.

Opens N loopback connections (GET PATH, Accept: text/event-stream), waits until each has received
its response header, lets the server settle, then keeps every stream drained for HOLD seconds while
sampling the server's processes from /proc: RSS growth per stream and CPU use while idle.
Prints one JSON object. Loopback only.
"""
import argparse, json, os, resource, selectors, socket, sys, time

TICK = os.sysconf("SC_CLK_TCK")


def processes(pid, children):
    pids = [pid]
    if children:
        try:
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                pids += [int(p) for p in f.read().split()]
        except OSError:
            pass
    return pids


def sample(pids):
    """CPU seconds (utime+stime) and VmRSS KiB summed over the processes."""
    cpu, rss = 0.0, 0
    for p in pids:
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            cpu += (int(fields[11]) + int(fields[12])) / TICK
            with open(f"/proc/{p}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        rss += int(line.split()[1])
        except OSError:
            pass
    return cpu, rss


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-p", "--port", type=int, required=True)
    ap.add_argument("--path", required=True)
    ap.add_argument("-c", "--streams", type=int, default=10000)
    ap.add_argument("--hold", type=float, default=20.0)
    ap.add_argument("--settle", type=float, default=3.0)
    ap.add_argument("--server-pid", type=int, required=True)
    ap.add_argument("--children", action="store_true")
    ap.add_argument("--timeout", type=float, default=60.0)
    a = ap.parse_args()

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = a.streams + 64
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))

    pids = processes(a.server_pid, a.children)
    cpu0, rss0 = sample(pids)
    request = (f"GET {a.path} HTTP/1.1\r\nHost: 127.0.0.1:{a.port}\r\n"
               "Accept: text/event-stream\r\n\r\n").encode()
    sel = selectors.DefaultSelector()
    pending = {}  # socket -> bytes received so far (until the header ends)
    ok = failed = 0
    deadline = time.monotonic() + a.timeout
    opened = 0
    while (opened < a.streams or pending) and time.monotonic() < deadline:
        while opened < a.streams and len(pending) < 256:  # at most 256 handshakes at once
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            try:
                s.connect(("127.0.0.1", a.port))
                s.sendall(request)
            except OSError:
                failed += 1
                s.close()
                opened += 1
                continue
            s.setblocking(False)
            sel.register(s, selectors.EVENT_READ)
            pending[s] = b""
            opened += 1
        for key, _ in sel.select(timeout=0.5):
            s = key.fileobj
            try:
                data = s.recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                data = b""
            if s not in pending:
                if not data:
                    failed += 1; sel.unregister(s); s.close()
                continue
            if not data:
                failed += 1; sel.unregister(s); s.close(); del pending[s]
                continue
            head = pending[s] + data
            if b"\r\n\r\n" in head:
                del pending[s]
                if head.startswith(b"HTTP/1.1 200") or head.startswith(b"HTTP/1.0 200"):
                    ok += 1
                else:
                    failed += 1; sel.unregister(s); s.close()
            else:
                pending[s] = head
    connect_s = a.timeout - max(0.0, deadline - time.monotonic())

    def drain(seconds):
        end = time.monotonic() + seconds
        closed = 0
        while (left := end - time.monotonic()) > 0:
            for key, _ in sel.select(timeout=min(left, 0.5)):
                s = key.fileobj
                try:
                    if not s.recv(65536):
                        closed += 1; sel.unregister(s); s.close()
                except BlockingIOError:
                    pass
                except OSError:
                    closed += 1; sel.unregister(s); s.close()
        return closed

    closed = drain(a.settle)
    pids = processes(a.server_pid, a.children)
    cpu1, rss1 = sample(pids)
    t1 = time.monotonic()
    closed += drain(a.hold)
    cpu2, rss2 = sample(pids)
    held = time.monotonic() - t1
    result = {
        "streams": a.streams, "open": ok - closed, "failed": failed, "closed_by_server": closed,
        "connect_s": round(connect_s, 3), "rss_before_kb": rss0, "rss_kb": rss2,
        "rss_per_stream_kb": round((rss2 - rss0) / max(ok, 1), 3),
        "idle_s": round(held, 3), "idle_cpu_s": round(cpu2 - cpu1, 3),
        "idle_cpu_pct": round(100.0 * (cpu2 - cpu1) / held, 3),
        "setup_cpu_s": round(cpu1 - cpu0, 3),
    }
    for s in list(sel.get_map().values()):
        sel.unregister(s.fileobj)
        s.fileobj.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.fileobj.close()
    json.dump(result, sys.stdout)
    print()
    return 0 if ok == a.streams and closed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
