"""State and writes at the sizes a cluster meets: NATS takes at most `max_payload` bytes in one message
(1 MiB by default). A write whose commit (or one of its bindings' commits) cannot fit is refused whole
with 413 naming the limit, never 503 for ever; snapshots larger than one message are stored in chunks,
so nodes join and restart from state of any size the store allows."""
import os
import threading
import time

import pytest

from cluster import fill, request

LIMIT = 1024 * 1024


def problem(answer):
    status, headers, body = answer
    return status, headers.get("Content-Type"), body


def test_a_commit_larger_than_a_message_is_413_and_changes_nothing_on_any_node(cluster):
    n1, n2, n3 = cluster.nodes
    assert request("PUT", n3.base + "/models/before", {"n": 1})[0] == 201
    huge = {"text": "x" * (LIMIT - 64)}   # inside --body-limit (1 MiB), but its commit and headers are past max_payload
    status, content_type, body = problem(request("PUT", n1.base + "/models/huge", huge))
    assert status == 413 and content_type == "application/problem+json", (status, body)
    assert body["type"].endswith("limit-exceeded") and "max_payload" in body["detail"] and str(LIMIT) in body["detail"]
    cluster.settle()
    assert all(request("GET", node.base + "/models/huge")[0] == 404 for node in cluster.nodes)
    # The cluster goes on taking writes.
    assert request("PUT", n2.base + "/models/huge", {"text": "small"})[0] == 201
    cluster.settle()
    assert all(request("GET", node.base + "/models/huge")[2] == {"text": "small"} for node in cluster.nodes)


def test_a_write_whose_binding_would_make_a_commit_larger_than_a_message_is_refused_whole(cluster):
    n1, n2, n3 = cluster.nodes
    assert request("PUT", n1.base + "/models/src", {"xs": []})[0] == 201
    assert request("PUT", n1.base + "/models/dst", {"ys": []})[0] == 201
    binding = {"id": "grow", "source": "src.xs", "target": "dst.ys", "each": True,
               "transform": {"name": "format", "pattern": "%.0f, written out at length to make each element long"}}
    assert request("POST", n2.base + "/bindings", binding)[0] == 201
    # 40,000 numbers (about 240 KB) fit; the 40,000 strings the binding makes (about 2.4 MB) do not.
    status, _, body = problem(request("PUT", n3.base + "/models/src/xs", list(range(40000))))
    assert status == 413 and "max_payload" in body["detail"], (status, body)
    cluster.settle()
    for node in cluster.nodes:
        assert request("GET", node.base + "/models/src")[2] == {"xs": []}
        assert request("GET", node.base + "/models/dst")[2] == {"ys": []}
    # A write that fits goes through, and the binding follows it on every node.
    assert request("PUT", n1.base + "/models/src/xs", [1, 2])[0] == 200
    cluster.settle()
    expected = {"ys": ["1, written out at length to make each element long", "2, written out at length to make each element long"]}
    assert all(request("GET", node.base + "/models/dst")[2] == expected for node in cluster.nodes)
    assert request("DELETE", n1.base + "/bindings/grow")[0] == 200


@pytest.mark.node_args("--cluster-snapshot-interval", "10", "--cluster-max-commits", "30")
def test_nodes_join_and_restart_from_a_snapshot_larger_than_a_message(fresh_cluster):
    cluster = fresh_cluster
    n1, n2, n3 = cluster.nodes
    n3.stop()
    assert request("PUT", n1.base + "/models/big", {"items": []})[0] == 201
    # Three 500 KB appends: 1.5 MB of state, past one message.
    for index in range(3):
        assert request("POST", [n1, n2][index % 2].base + "/models/big/items", "y" * 500_000)[0] == 200
    # Enough small writes that the stream drops the commits n3 missed (it keeps 30).
    for value in range(60):
        assert request("PUT", [n1, n2][value % 2].base + "/models/small", {"n": value})[0] in (200, 201)
    last = cluster.settle()
    state = cluster.nats[0].stream_state("LIVEBIND")
    assert state["first_seq"] > 2, state
    metrics = request("GET", n1.base + "/metrics")[2] + request("GET", n2.base + "/metrics")[2]
    assert sum(int(line.split()[1]) for line in metrics.splitlines() if line.startswith("livebind_cluster_snapshots_total")) >= 1
    n3.start()
    assert n3.applied() == last
    expected = request("GET", n1.base + "/models/big")
    for node in cluster.nodes:
        got = request("GET", node.base + "/models/big")
        assert got[2] == expected[2] and got[1]["ETag"] == expected[1]["ETag"]
        assert request("GET", node.base + "/models/small")[2] == {"n": 59}
    # Each node restarts in turn from the chunked snapshot, and the others go on taking writes.
    for index, node in enumerate(cluster.nodes):
        node.stop()
        for value in range(20):
            other = cluster.nodes[(index + 1 + value % 2) % 3]
            assert request("PUT", other.base + "/models/small", {"n": 100 * index + value})[0] == 200
        node.start()
        cluster.settle()
    expected = request("GET", n1.base + "/models/big")
    assert all(request("GET", node.base + "/models/big") [2] == expected[2] for node in cluster.nodes)
    assert all(request("GET", node.base + "/models/small")[2] == {"n": 219} for node in cluster.nodes)


STATE_MB = int(os.environ.get("CLUSTER_STATE_MB", "200"))


@pytest.mark.node_args("--cluster-snapshot-interval", "200", "--cluster-max-commits", "20000")
def test_a_rolling_restart_under_writers_with_hundreds_of_megabytes_of_state(fresh_cluster):
    """STATE_MB of state in models of 1 to 16 MiB (appends of 900 KB, each inside one message), a
    snapshot every 200 commits. Each node restarts in turn, from the last (chunked) snapshot and the
    commits after it, while 8 writers append through the other two. Every node comes back, every node
    ends with the same documents, and every acknowledged append is there."""
    cluster = fresh_cluster
    nodes = cluster.nodes
    for node in nodes:
        node.startup = 120   # loading hundreds of megabytes on a machine the whole cluster shares
    models = fill(nodes, STATE_MB)
    cluster.settle(timeout=120)

    acknowledged = {writer: [] for writer in range(8)}
    stop = threading.Event()
    down = {"node": None}

    def write(writer):
        count = 0
        while not stop.is_set():
            live = [node for node in nodes if node is not down["node"]]
            node = live[count % len(live)]
            try:
                status, _, _ = request("POST", node.base + f"/models/w{writer}/log", count, timeout=10)
            except OSError:
                status = 0
            if status == 200:
                acknowledged[writer].append(count)
            elif status == 404:
                request("PUT", node.base + f"/models/w{writer}", {"log": []}, headers={"If-None-Match": "*"}, timeout=10)
            count += 1

    writers = [threading.Thread(target=write, args=(writer,), daemon=True) for writer in range(8)]
    for thread in writers:
        thread.start()
    try:
        for node in nodes:
            time.sleep(1)
            down["node"] = node
            node.stop()
            node.start()
            down["node"] = None
            assert node.health()["cluster"]["connected"]
    finally:
        stop.set()
        for thread in writers:
            thread.join(timeout=30)
    cluster.settle(timeout=120)
    snapshots = sum(int(line.split()[1]) for node in nodes for line in request("GET", node.base + "/metrics")[2].splitlines()
                    if line.startswith("livebind_cluster_snapshots_total"))
    assert snapshots >= 1
    reference = {model: request("GET", nodes[0].base + f"/models/{model}", timeout=60)[2]
                 for model in models + [f"w{w}" for w in range(8)]}
    for node in nodes[1:]:
        for model, expected in reference.items():
            assert request("GET", node.base + f"/models/{model}", timeout=60)[2] == expected, (node.node_name, model)
    for writer, values in acknowledged.items():
        assert values, f"writer {writer} had no write acknowledged"
        assert set(values) <= set(reference[f"w{writer}"]["log"]), f"writer {writer} lost acknowledged appends"
