"""Snapshots in JetStream and a bounded commit stream: a node that starts after the stream dropped its
oldest commits loads the last snapshot and the commits after it."""
import pytest

from cluster import EventReader, request, wait_until

STREAM = "LIVEBIND"


@pytest.mark.node_args("--cluster-snapshot-interval", "50", "--cluster-max-commits", "150")
def test_a_node_joins_from_a_snapshot_after_the_stream_dropped_old_commits(fresh_cluster):
    cluster = fresh_cluster
    n1, n2, n3 = cluster.nodes
    assert request("PUT", n1.base + "/models/big", {"items": [], "n": 0})[0] == 201
    cluster.settle()
    n3.stop()
    # A binding made over HTTP while n3 is away: its message leaves the stream, the snapshots keep it.
    assert request("PUT", n1.base + "/models/mirror", {"n": None})[0] == 201
    status, _, body = request("POST", n2.base + "/bindings", {"id": "mirror", "source": "big.n", "target": "mirror.n"})
    assert status == 201, body
    for value in range(400):
        node = [n1, n2][value % 2]
        if value % 4 == 3:
            assert request("PUT", node.base + "/models/big/n", value)[0] == 200
        else:
            assert request("POST", node.base + "/models/big/items", value)[0] == 200
    last = cluster.settle()
    state = cluster.nats[0].stream_state(STREAM)
    assert state["first_seq"] > 1 and state["messages"] <= 150, state
    snapshots = sum(int(line.split()[1]) for node in (n1, n2)
                    for line in request("GET", node.base + "/metrics")[2].splitlines()
                    if line.startswith("livebind_cluster_snapshots_total"))
    assert snapshots >= 1
    # n3 was stopped at sequence 1: what it missed is partly gone from the stream.
    n3.start()
    assert n3.applied() == last
    expected = request("GET", n1.base + "/models/big")
    joined = request("GET", n3.base + "/models/big")
    assert joined[2] == expected[2] and joined[1]["ETag"] == expected[1]["ETag"]
    assert joined[2]["n"] == 399 and len(joined[2]["items"]) == 300
    assert request("GET", n3.base + "/models/mirror")[2] == {"n": 399}
    assert request("GET", n3.base + "/bindings/mirror")[2]["source"] == "big.n"
    # A client resuming with an id the stream no longer holds gets resync and a fresh snapshot, never a gap.
    reader = EventReader(n3.base, "?model=big", last_event_id=2)
    reader.wait_for(lambda events: any(e == "snapshot" for _, e, _ in events), 10, "resync and a snapshot")
    assert [event for _, event, _ in reader.snapshot()][:2] == ["resync", "snapshot"]
    reader.close()
    # It takes writes, ordered after everything.
    status, _, body = request("POST", n3.base + "/models/big/items", 400)
    assert status == 200 and int(body["id"]) == last + 1
    # n3 runs the binding it loaded for its own writes.
    assert request("PUT", n3.base + "/models/big/n", 1000)[0] == 200
    cluster.settle()
    assert all(request("GET", node.base + "/models/mirror")[2] == {"n": 1000} for node in cluster.nodes)


def test_a_bounded_stream_needs_snapshots():
    import subprocess
    from cluster import server_binary
    result = subprocess.run([server_binary(), "--cluster", "nats://127.0.0.1:1", "--cluster-max-commits", "100",
                             "--cluster-snapshot-interval", "50"], capture_output=True, text=True, timeout=30)
    assert result.returncode != 0
    assert "at least 3 times --cluster-snapshot-interval" in result.stderr


def test_a_restarted_node_resumes_ids_from_before_its_start(fresh_cluster):
    """A client that read up to some id on any node and resumes on a node that restarted since gets
    exactly the events after it, from the stream, not `resync`."""
    cluster = fresh_cluster
    n1, n2, n3 = cluster.nodes
    assert request("PUT", n1.base + "/models/m", {"n": 0, "log": []})[0] == 201
    ids = []
    for value in range(1, 11):
        status, _, body = request("PUT", [n1, n3][value % 2].base + "/models/m/n", value)
        assert status == 200
        ids.append(int(body["id"]))
    # A binding change between commits takes a sequence of the stream that is no event.
    assert request("POST", n1.base + "/bindings", {"id": "copy", "source": "m.n", "target": "m.copy"})[0] == 201
    for value in range(11, 16):
        status, _, body = request("PUT", n1.base + "/models/m/n", value)
        assert status == 200
        ids.append(int(body["id"]))
    cluster.settle()
    n2.stop()
    n2.start()
    resume_after = ids[4]   # the client saw n = 5
    reader = EventReader(n2.base, "?model=m", last_event_id=resume_after)
    reader.wait_for(lambda events: any(e == "set" and d.get("path") == "/n" and d.get("value") == 15 for _, e, d in events),
                    10, "the events after the resumed id")
    events = reader.snapshot()
    reader.close()
    assert not any(event in ("resync", "snapshot") for _, event, _ in events), events[:3]
    values = [data["value"] for _, event, data in events if event == "set" and data.get("path") == "/n"]
    assert values == list(range(6, 16)), values
    assert all(int(event_id) > resume_after for event_id, _, _ in events if event_id)
