"""What a review of issue 41's bounds found by reading the code and trying it on a release server, as
named cases: each fails on the server before its fix."""
import time

from cost_measure import MiB, open_silent, reset_peak, unsent_bytes
from harness import Server, SSEConnection, memory


def metric(server, name):
    """One counter or gauge from /metrics (0 when it is not there)."""
    _, _, text = server.call("GET", "/metrics")
    for line in (text if isinstance(text, str) else text.decode()).splitlines():
        if line.startswith(name + " "):
            return float(line.split()[1])
    return 0.0


def test_a_replay_naming_one_model_a_hundred_times_rebuilds_it_once():
    """`since=` rebuilt a model as it was once per `model=` value and counted none of them against
    `--history-max-bytes`: a 900 kB model named 100 times grew the server by 200 MB before its 422."""
    with Server(["--history-max-bytes", str(1 * MiB), "--history-max-scan", "100",
                 "--max-model-size", str(1 * MiB)]) as server:
        server.call("PUT", "/models/big", {"blob": "x" * 900_000})
        server.call("POST", "/models/big", {"n": 1})
        pid, port = server.pid, server.port
        peak = "VmHWM" if reset_peak(pid) else "VmRSS"
        before = memory(pid, "VmRSS")
        names = "&".join(["model=big"] * 100)
        stream = SSEConnection(port, f"since=1&{names}")
        try:
            assert stream.status in (200, 422), stream.error_body
            if stream.status == 200:
                events = []
                deadline = time.monotonic() + 20
                while time.monotonic() < deadline and not any(e["event"] == "snapshot" for e in events):
                    events += stream.read(wait=0.5)
                # One snapshot of the model as it was: the name counts once.
                assert [e["event"] for e in events].count("snapshot") == 1, [e["event"] for e in events]
        finally:
            stream.close()
        grown = memory(pid, peak) - before
        # The row's bound (3 × history-max-bytes + max-model-size) and 32 MiB of slack.
        assert grown < 4 * MiB + 32 * MiB, f"the server grew by {grown:,} bytes"


def test_views_arranged_outside_the_lock_are_held_to_max_view_rows():
    """A view whose array was replaced by a long one (arranged off the hub's lock) was installed
    without counting every view's rows: five views of a 9,000-row array kept 31,500 rows arranged
    with `--max-view-rows` 20,000 and every stream open."""
    with Server(["--max-view-rows", "20000"]) as server:
        server.call("PUT", "/models/m", {"a": [{"v": i % 10} for i in range(100)]})
        streams = [SSEConnection(server.port, f"sub=m/a;where=v:ge:{n}") for n in range(1, 6)]
        try:
            for stream in streams:
                assert stream.status == 200, stream.error_body
                stream.read(wait=0.5)
            server.call("PUT", "/models/m/a", [{"v": i % 10} for i in range(9000)])
            ended = []
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and not ended:
                for stream in streams:
                    stream.read(wait=0.1)
                ended = [stream for stream in streams if stream.closed]
            # The largest views go until the rest fit: 8,100 + 7,200 + 6,300 rows already pass 20,000.
            assert ended, "every stream stayed open with its view past --max-view-rows"
            assert len(ended) < len(streams), "the views that fit went too"
        finally:
            for stream in streams:
                stream.close()


def test_replay_streams_whose_clients_read_nothing_are_cut_when_the_budget_is_spent():
    """A `since=` stream sending its replay had no connection in the hub, so neither a new stream nor
    the heartbeat could cut it: three silent replays of 900 kB each held `--max-unsent-bytes`
    (3,000,000) and every new stream got 503 for as long as they stayed."""
    with Server(["--max-unsent-bytes", "3000000", "--heartbeat", "1"]) as server:
        for name in ("c1", "c2", "c3"):
            server.call("PUT", f"/models/{name}", {"blob": "x" * 900_000})
            server.call("POST", f"/models/{name}", {"n": 1})
        silent = [open_silent(server.port, f"/events?since=1&model={name}") for name in ("c1", "c2", "c3")]
        try:
            time.sleep(1)
            assert unsent_bytes(server.port) > 2_000_000, "the replays are counted as held unsent"
            status = None
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline:
                probe = SSEConnection(server.port, "model=c3")
                status = probe.status
                probe.close()
                if status == 200:
                    break
                time.sleep(1)
            assert status == 200, "the silent replays held the budget and were never cut"
            assert metric(server, "livebind_budget_streams_closed_total") >= 1
        finally:
            for sock in silent:
                sock.close()
