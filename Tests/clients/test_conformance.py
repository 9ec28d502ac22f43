"""Both clients against a real livebind-server, by the same tests: the Python client (clients/python)
and the Swift client, through its driver livebind-mirror (swift_client.py; skipped unless LIVEBIND_MIRROR
names it). Whatever the server does to the models, and whatever happens to the connection (dropped,
silent, the server killed and restarted with its data, ids too old to resume), a mirror ends equal to
the server's documents; local writes reach the server once, or roll back with a conflict; writes made
while the server is away wait in a file and are applied once, in order, when it is back — even across
a restart of the client. The server itself is read with the Python client's plain requests (`call`)."""
import json
import random
import threading
import time

import pytest

from client_harness import DroppingProxy, Server
from livebind_server import wait_until
from livebind_client import NO_BODY, Client, ConflictError, LiveBindError


def call(server, method, path, body=NO_BODY, content_type="application/json"):
    client = Client(server.base)
    return client.request(method, path, body, content_type=content_type)




def server_value(server, target):
    model, _, pointer = target.partition("/")
    status, _, value = call(server, "GET", f"/models/{model}" + (f"/{pointer}" if pointer else ""))
    return value if status == 200 else None


def converged(mirror, server, targets):
    return all(mirror.value(t) == server_value(server, t) for t in targets)


def random_write(server, rng, counter):
    """One write of a random kind to `orders` (or `sensor`): inserts, removes, replaces, moves, sets,
    a whole-model PUT now and then, a drop and re-create rarely."""
    items = server_value(server, "orders/items") or []
    choice = rng.random()
    if choice < 0.3 or not items:
        call(server, "POST", "/models/orders/items", {"id": f"o{counter}", "qty": rng.randint(1, 9)})
    elif choice < 0.45:
        call(server, "DELETE", f"/models/orders/items/{rng.randrange(len(items))}")
    elif choice < 0.6:
        call(server, "PUT", f"/models/orders/items/{rng.randrange(len(items))}/qty", rng.randint(1, 99))
    elif choice < 0.7:
        patch = [{"op": "move", "from": f"/items/{rng.randrange(len(items))}", "path": f"/items/{rng.randrange(len(items))}"}]
        call(server, "PATCH", "/models/orders", patch, content_type="application/json-patch+json")
    elif choice < 0.85:
        call(server, "PUT", "/models/sensor/t", round(rng.uniform(10, 30), 2))
    elif choice < 0.95:
        call(server, "PATCH", "/models/sensor", {"meta": {"unit": rng.choice(["C", "F"]), "n": counter}},
             content_type="application/merge-patch+json")
    elif choice < 0.98:
        call(server, "PUT", "/models/orders", {"items": items[: len(items) // 2]})
    else:
        call(server, "DELETE", "/models/sensor")
        call(server, "PUT", "/models/sensor", {"t": 0})


def seed(server):
    assert call(server, "PUT", "/models/sensor", {"t": 20.5, "meta": {"unit": "C"}})[0] == 201
    assert call(server, "PUT", "/models/orders", {"items": []})[0] == 201


TARGETS = ["sensor", "orders/items"]


@pytest.mark.parametrize("seed_value", [1, 2, 3])
def test_a_mirror_follows_every_kind_of_change(client_class, server, seed_value):
    seed(server)
    client = client_class(server.base)
    mirror = client.mirror(TARGETS)
    try:
        assert mirror.wait_until_synced(10)
        rng = random.Random(seed_value)
        for counter in range(150):
            random_write(server, rng, counter)
            if counter % 25 == 24:
                wait_until(lambda: converged(mirror, server, TARGETS), 10, "the mirror to converge")
        wait_until(lambda: converged(mirror, server, TARGETS), 10, "the mirror to converge")
        assert mirror.error is None
    finally:
        mirror.close()


def test_dropped_connections_resume_exactly(client_class, server, proxy):
    seed(server)
    mirror = client_class(proxy.base).mirror(TARGETS)
    try:
        assert mirror.wait_until_synced(10)
        rng = random.Random(7)
        for counter in range(120):
            random_write(server, rng, counter)
            if counter % 15 == 7:
                opened = mirror.connections
                proxy.drop()
                proxy.resume()
                wait_until(lambda: mirror.connections > opened, 10, "the mirror to connect again")
        wait_until(lambda: converged(mirror, server, TARGETS), 15, "the mirror to converge after drops")
        assert mirror.reconnects >= 8
        assert mirror.resyncs == 0       # resumed exactly each time, not from fresh snapshots
    finally:
        mirror.close()


def test_the_server_killed_and_restarted_with_its_data(client_class, server):
    seed(server)
    mirror = client_class(server.base).mirror(TARGETS)
    try:
        assert mirror.wait_until_synced(10)
        rng = random.Random(11)
        for round_number in range(3):
            for counter in range(30):
                random_write(server, rng, round_number * 100 + counter)
            server.kill()
            server.start()
            for counter in range(10):
                random_write(server, rng, round_number * 100 + 50 + counter)
            wait_until(lambda: converged(mirror, server, TARGETS), 20, "the mirror to converge after a restart")
    finally:
        mirror.close()


def test_ids_too_old_to_resume_get_resync_and_fresh_snapshots(client_class, folder):
    server = Server(["--retained-events", "5"]).start()
    proxy = DroppingProxy(server.port)
    try:
        seed(server)
        mirror = client_class(proxy.base).mirror(TARGETS)
        assert mirror.wait_until_synced(10)
        proxy.drop()
        rng = random.Random(3)
        for counter in range(60):
            random_write(server, rng, counter)
        proxy.resume()
        wait_until(lambda: converged(mirror, server, TARGETS), 15, "the mirror to converge after resync")
        mirror.close()
    finally:
        proxy.close()
        server.close()


def test_a_silent_connection_is_noticed_within_two_heartbeats(client_class, folder):
    server = Server(["--heartbeat", "1"]).start()
    proxy = DroppingProxy(server.port)
    try:
        seed(server)
        mirror = client_class(proxy.base).mirror(TARGETS, heartbeat=1)
        assert mirror.wait_until_synced(10)
        before = mirror.reconnects
        proxy.hold_events()          # the stream stays open but nothing comes through
        started = time.monotonic()
        wait_until(lambda: mirror.reconnects > before, 6, "the mirror to drop the silent stream")
        assert time.monotonic() - started < 4
        proxy.release_events()
        call(server, "PUT", "/models/sensor/t", 99)
        wait_until(lambda: mirror.value("sensor/t") == 99, 10, "the mirror to follow again")
        mirror.close()
    finally:
        proxy.close()
        server.close()


def test_local_writes_reach_the_server_or_roll_back_on_conflict(client_class, server, proxy):
    seed(server)
    one, two = client_class(proxy.base).mirror(TARGETS), client_class(server.base).mirror(TARGETS)
    try:
        assert one.wait_until_synced(10) and two.wait_until_synced(10)
        answer = one.set("sensor/t", 31)
        assert answer["rev"] and server_value(server, "sensor/t") == 31
        wait_until(lambda: two.value("sensor/t") == 31, 10, "the other mirror")
        # Another writer moves the model on while `one` has not heard of it: its write, made against
        # the revision it has, is refused, and its local value rolled back.
        wait_until(lambda: one.revision("sensor") == answer["rev"], 10, "the first mirror to hear its write")
        proxy.hold_events()
        call(server, "PUT", "/models/sensor/meta/unit", "K")
        with pytest.raises(ConflictError) as refused:
            one.set("sensor/t", 32)
        assert refused.value.status == 412
        assert one.value("sensor/t") == 31
        proxy.release_events()
        wait_until(lambda: one.value("sensor") == server_value(server, "sensor"), 10, "the rolled-back mirror")
        # A write into a mirrored location.
        call(server, "POST", "/models/orders/items", {"id": "a", "qty": 1})
        wait_until(lambda: two.value("orders/items") == [{"id": "a", "qty": 1}], 10, "the location")
        two.set("orders/items/0/qty", 5)
        assert server_value(server, "orders/items") == [{"id": "a", "qty": 5}]
        wait_until(lambda: converged(one, server, TARGETS) and converged(two, server, TARGETS), 10, "both mirrors")
    finally:
        one.close()
        two.close()


def test_offline_writes_wait_in_a_file_and_are_applied_once_in_order(client_class, server, proxy, folder):
    seed(server)
    queue = str(folder / "writes.jsonl")
    client = client_class(proxy.base, queue=queue, retries=1)
    mirror = client.mirror(TARGETS)
    assert mirror.wait_until_synced(10)
    proxy.drop()                                   # the server is out of reach
    for value in range(5):
        assert mirror.set("sensor/t", 100 + value, if_match=False) is None
    assert mirror.value("sensor/t") == 104         # applied here already
    assert [entry["body"] for entry in client.queued()] == [100, 101, 102, 103, 104]
    mirror.close()
    # The app restarts: a new client reads the same file. The first write's answer is lost on the way
    # back; it is sent again with its key and applied once.
    revision = lambda: next(m["rev"] for m in call(server, "GET", "/models")[2]["models"] if m["name"] == "sensor")  # noqa: E731
    before = revision()
    proxy.resume()
    proxy.swallow_write_answers(1)
    again = client_class(proxy.base, queue=queue, retries=3)
    mirror = again.mirror(TARGETS)
    try:
        wait_until(lambda: not again.queued(), 15, "the queue to drain")
        assert server_value(server, "sensor/t") == 104
        assert revision() == before + 5, (before, revision())
        assert again.rejected == []
        wait_until(lambda: converged(mirror, server, TARGETS), 10, "the mirror")
    finally:
        mirror.close()


def test_a_queued_write_the_server_refuses_is_set_aside(client_class, server, proxy, folder):
    seed(server)
    queue = str(folder / "writes.jsonl")
    client = client_class(proxy.base, queue=queue, retries=0)
    mirror = client.mirror(TARGETS)
    assert mirror.wait_until_synced(10)
    proxy.drop()
    assert mirror.set("sensor/t", 1) is None       # made against the revision the mirror had
    call(server, "PUT", "/models/sensor/t", 2)      # meanwhile the server moves on
    proxy.resume()
    wait_until(lambda: not client.queued(), 15, "the queue to drain")
    assert [status for status, _, _ in client.rejected] == [412]
    wait_until(lambda: mirror.value("sensor/t") == 2, 10, "the mirror to show the server's value")
    mirror.close()


def test_writers_racing_through_mirrors_converge(client_class, server):
    seed(server)
    mirrors = [client_class(server.base).mirror(TARGETS) for _ in range(3)]
    try:
        for mirror in mirrors:
            assert mirror.wait_until_synced(10)
        outcomes = []

        def writer(mirror, number):
            for step in range(20):
                try:
                    mirror.set("sensor/t", number * 100 + step)
                    outcomes.append("ok")
                except ConflictError:
                    outcomes.append("conflict")

        threads = [threading.Thread(target=writer, args=(m, n)) for n, m in enumerate(mirrors)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        assert "ok" in outcomes
        for mirror in mirrors:
            wait_until(lambda: converged(mirror, server, TARGETS), 10, "every mirror to converge")
    finally:
        for mirror in mirrors:
            mirror.close()


def test_large_documents_and_events_arrive_whole(client_class, server):
    """Events larger than the server's write buffer come in several HTTP chunks."""
    big = {"rows": [{"id": n, "text": "x" * 200} for n in range(1500)]}     # about 330 kB
    assert call(server, "PUT", "/models/big", big)[0] == 201
    mirror = client_class(server.base).mirror(["big"])
    try:
        assert mirror.wait_until_synced(10)
        assert mirror.value("big") == big
        replacement = [{"id": n, "text": "y" * 300} for n in range(800)]
        assert call(server, "PUT", "/models/big/rows", replacement)[0] == 200
        wait_until(lambda: mirror.value("big/rows") == replacement, 10, "the large set")
    finally:
        mirror.close()


def test_a_location_write_is_not_refused_for_changes_elsewhere_in_the_model(client_class, server):
    seed(server)
    mirror = client_class(server.base).mirror(["orders/items"])
    try:
        assert mirror.wait_until_synced(10)
        call(server, "PUT", "/models/orders/note", "elsewhere")     # a location does not hear this
        assert mirror.set("orders/items", [{"id": "z", "qty": 3}])["rev"]
        assert server_value(server, "orders/items") == [{"id": "z", "qty": 3}]
    finally:
        mirror.close()


def test_names_that_need_escaping_round_trip(client_class, server):
    odd = {"a/b": 1, "t~x": 2, "sp ace": 3, "pct%20": 4, "ünï": 5}
    assert call(server, "PUT", "/models/odd", odd)[0] == 201
    mirror = client_class(server.base).mirror(["odd"])
    try:
        assert mirror.wait_until_synced(10)
        for key, value in odd.items():
            escaped = key.replace("~", "~0").replace("/", "~1")
            assert mirror.value(f"odd/{escaped}") == value
            answer = mirror.set(f"odd/{escaped}", value * 10)
            # The next write goes with If-Match: the revision this write made, once the mirror has it.
            wait_until(lambda: mirror.revision("odd") >= answer["rev"], 10, "the mirror to hear its write")
        wait_until(lambda: mirror.value("odd") == {k: v * 10 for k, v in odd.items()}, 10, "the mirror")
        assert server_value(server, "odd") == {k: v * 10 for k, v in odd.items()}
    finally:
        mirror.close()


def test_a_line_torn_by_a_crash_is_skipped_and_the_rest_is_sent(client_class, server, folder):
    seed(server)
    queue = folder / "writes.jsonl"
    entry = {"key": "k-1", "method": "PUT", "path": "/models/sensor/t", "body": 7, "if_match": None}
    queue.write_text(json.dumps(entry) + "\n" + '{"key": "k-2", "method": "PU')
    client = client_class(server.base, queue=str(queue))
    assert [e["key"] for e in client.queued()] == ["k-1"]
    assert client.flush_queue() == 1
    assert server_value(server, "sensor/t") == 7 and client.queued() == []
    client.enqueue("PUT", "/models/sensor/t", 8)
    assert client.flush_queue() == 1 and server_value(server, "sensor/t") == 8


def test_null_is_a_value_a_client_writes(client_class, server, proxy, folder):
    """JSON `null` is a body like any other: a mirror's set sends it (not an empty request, which is
    415), and so does the offline queue, across a restart of the client, rather than setting it aside."""
    seed(server)
    queue = str(folder / "writes.jsonl")
    client = client_class(proxy.base, queue=queue, retries=0)
    mirror = client.mirror(TARGETS)
    try:
        assert mirror.wait_until_synced(10)
        assert mirror.set("sensor/t", None)["rev"]
        assert call(server, "GET", "/models/sensor/t")[:3:2] == (200, None)
        proxy.drop()
        assert mirror.set("sensor/meta", None, if_match=False) is None      # offline: queued
    finally:
        mirror.close()
    assert [(entry["body"], entry["has_body"]) for entry in client.queued()] == [(None, True)]
    proxy.resume()
    again = client_class(proxy.base, queue=queue)          # the client restarted: the queue file is read
    assert again.flush_queue() == 1
    assert again.rejected == [] and again.queued() == []
    assert call(server, "GET", "/models/sensor/meta")[:3:2] == (200, None)


def test_the_queue_file_keeps_a_null_body_apart_from_none_and_reads_older_files(client_class, server, folder):
    """The queue file is shared by both clients: "has_body" tells a null body from no body; a line
    written before it (`"body": null` was no body) reads as it did."""
    seed(server)
    assert call(server, "PUT", "/models/scratch", {"a": 1})[0] == 201
    queue = folder / "writes.jsonl"
    older = [{"key": "old-1", "method": "PUT", "path": "/models/sensor/t", "body": 7, "if_match": None},
             {"key": "old-2", "method": "DELETE", "path": "/models/scratch/a", "body": None, "if_match": None}]
    queue.write_text("".join(json.dumps(entry) + "\n" for entry in older))
    Client(server.base, queue=str(queue)).enqueue("PUT", "/models/sensor/u", None)     # the Python client's line
    client = client_class(server.base, queue=str(queue))
    client.enqueue("PUT", "/models/sensor/v", None)
    client.enqueue("DELETE", "/models/scratch")

    def bodies(entries):
        return [(e["method"], e["body"], e.get("has_body", e["body"] is not None)) for e in entries]
    expected = [("PUT", 7, True), ("DELETE", None, False), ("PUT", None, True), ("PUT", None, True),
                ("DELETE", None, False)]
    assert bodies(client.queued()) == expected
    assert bodies(Client(server.base, queue=str(queue)).queued()) == expected   # as the Python client reads it
    assert client.flush_queue() == 5
    assert client.rejected == []
    assert server_value(server, "sensor/t") == 7
    assert call(server, "GET", "/models/sensor/u")[:3:2] == (200, None)
    assert call(server, "GET", "/models/sensor/v")[:3:2] == (200, None)
    assert call(server, "GET", "/models/scratch")[0] == 404


def test_tokens_reach_the_stream_and_writes_and_a_refused_stream_stops_the_mirror(client_class, folder):
    """With tokens and `--private`: no token (or a wrong one) is 401 for the stream, which stops the
    mirror with that error; the right token mirrors; a token that may only read has its write refused
    (403) and the local value put back."""
    tokens = folder / "tokens.json"
    tokens.write_text(json.dumps([{"token": "reader-token-0123456789", "scopes": ["read"]},
                                  {"token": "writer-token-0123456789", "scopes": ["read", "write"]}]))
    server = Server(["--tokens", str(tokens), "--private"]).start()
    try:
        writer = Client(server.base, token="writer-token-0123456789")
        assert writer.write("PUT", "/models/sensor", {"t": 1})["rev"]
        for token in (None, "wrong-token-0123456789"):
            refused = client_class(server.base, token=token).mirror(TARGETS, heartbeat=1)
            wait_until(lambda: refused.error is not None, 10, "the stream to be refused")
            assert refused.error.status == 401
            refused.close()
        reader = client_class(server.base, token="reader-token-0123456789").mirror(["sensor"], heartbeat=1)
        try:
            assert reader.wait_until_synced(10) and reader.value("sensor/t") == 1
            with pytest.raises(LiveBindError) as forbidden:
                reader.set("sensor/t", 2)
            assert forbidden.value.status == 403
            assert reader.value("sensor/t") == 1
        finally:
            reader.close()
        mirror = client_class(server.base, token="writer-token-0123456789").mirror(["sensor"], heartbeat=1)
        try:
            assert mirror.wait_until_synced(10)
            assert mirror.set("sensor/t", 3)["rev"]
            assert writer.request("GET", "/models/sensor/t")[2] == 3
        finally:
            mirror.close()
    finally:
        server.close()


def test_a_server_that_is_down_is_noticed_at_once_and_the_write_waits(client_class, server, folder):
    """The server's process gone (connections refused, no proxy): a write goes to the queue within a
    few seconds, not after connect timeouts, and is applied once the server is back with its data."""
    seed(server)
    client = client_class(server.base, queue=str(folder / "writes.jsonl"), retries=1)
    mirror = client.mirror(TARGETS, heartbeat=1)
    try:
        assert mirror.wait_until_synced(10)
        server.kill()
        started = time.monotonic()
        assert mirror.set("sensor/t", 77, if_match=False) is None
        assert time.monotonic() - started < 5, time.monotonic() - started
        assert mirror.value("sensor/t") == 77
        server.start()
        wait_until(lambda: server_value(server, "sensor/t") == 77, 20, "the queued write to reach the server")
        wait_until(lambda: not client.queued(), 10, "the queue to drain")
        wait_until(lambda: converged(mirror, server, TARGETS), 10, "the mirror")
    finally:
        mirror.close()


def test_tls_with_a_private_certificate(client_class, folder):
    """An https server whose certificate the system does not trust: the client given it mirrors and
    writes; without it, the stream is refused before a byte of it is read."""
    import ssl
    import subprocess
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True, timeout=30)
    server = Server(["--tls-cert", str(cert), "--tls-key", str(key)]).start(wait=False)
    base = f"https://127.0.0.1:{server.port}"
    oracle = Client(base, ssl_context=ssl.create_default_context(cafile=str(cert)))
    try:
        wait_until(lambda: _answers(oracle), 20, "the TLS server to answer")
        oracle.write("PUT", "/models/sensor", {"t": 1})
        trusting = (client_class(base, ssl_context=ssl.create_default_context(cafile=str(cert)))
                    if client_class is Client else client_class(base, ca_file=str(cert)))
        mirror = trusting.mirror(["sensor"], heartbeat=1)
        try:
            assert mirror.wait_until_synced(10) and mirror.value("sensor") == {"t": 1}
            assert mirror.set("sensor/t", 2)["rev"]
            assert oracle.request("GET", "/models/sensor/t")[2] == 2
        finally:
            mirror.close()
        doubting = client_class(base).mirror(["sensor"], heartbeat=1)
        try:
            assert not doubting.wait_until_synced(3)
        finally:
            doubting.close()
    finally:
        server.close()


def _answers(client):
    try:
        return client.request("GET", "/healthz")[0] == 200
    except OSError:
        return False
