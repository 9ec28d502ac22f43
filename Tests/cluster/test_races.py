"""Races for the stream that a node's own commits lose after its write went in: a binding's derived
commit (the writing node catches the binding up) and Swift writes made outside a request (rebased on
the new state). Nothing is dropped: every node ends with targets equal to their sources."""
import concurrent.futures
import re
import threading

import pytest

from cluster import EventReader, replay, request

WRITERS = 8
ROUNDS = 4
WRITES_PER_ROUND = 12


def log_marks(cluster):
    return {node.node_name: node.log_path.stat().st_size if node.log_path.exists() else 0 for node in cluster.nodes}


def logs_since(cluster, marks):
    text = {}
    for node in cluster.nodes:
        with open(node.log_path, "rb") as log:
            log.seek(marks[node.node_name])
            text[node.node_name] = log.read().decode(errors="replace")
    return text


def metric(node, name):
    body = request("GET", node.base + "/metrics")[2]
    match = re.search(rf"^{name} (\d+)$", body, re.MULTILINE)
    assert match, name
    return int(match.group(1))


def test_a_binding_target_always_catches_up_when_its_derived_commit_loses_the_race(cluster):
    marks = log_marks(cluster)
    n1 = cluster.nodes[0]
    keys = [f"k{w}" for w in range(WRITERS)]
    assert request("PUT", n1.base + "/models/origin", {key: 0 for key in keys})[0] == 201
    assert request("PUT", n1.base + "/models/mirror", {**{key: None for key in keys}, "noise": 0})[0] == 201
    for w, key in enumerate(keys):
        binding = {"source": f"origin.{key}", "target": f"mirror.{key}",
                   "transform": {"name": "scale", "factor": 10}}
        status, _, body = request("POST", cluster.nodes[w % 3].base + "/bindings", binding)
        assert status == 201, body
    start = cluster.settle()
    readers = [EventReader(node.base, "?model=origin&model=mirror") for node in cluster.nodes]
    for reader in readers:
        reader.wait_for(lambda events: sum(event == "snapshot" for _, event, _ in events) >= 2, 10, "the snapshots")
    conflicts = sum(metric(node, "livebind_cluster_conflicts_total") for node in cluster.nodes)

    def writer(number, round):
        # Each writer sets its own source key, spread over the three nodes; two more write the target
        # model only, so that derived commits race them too.
        for step in range(WRITES_PER_ROUND):
            node = cluster.nodes[(number + step) % 3]
            if number < WRITERS:
                value = round * 1000 + step + 1
                status, _, body = request("PUT", node.base + f"/models/origin/k{number}", value)
            else:
                status, _, body = request("PUT", node.base + "/models/mirror/noise", round * 1000 + step)
            assert status == 200, body

    for round in range(ROUNDS):
        with concurrent.futures.ThreadPoolExecutor(WRITERS + 2) as pool:
            list(pool.map(lambda number: writer(number, round), range(WRITERS + 2)))
        cluster.settle()
        for node in cluster.nodes:
            origin = request("GET", node.base + "/models/origin")[2]
            mirror = request("GET", node.base + "/models/mirror")[2]
            assert origin == {key: round * 1000 + WRITES_PER_ROUND for key in keys}, node.node_name
            assert {key: mirror[key] for key in keys} == {key: origin[key] * 10 for key in keys}, \
                f"a binding target disagrees with its source on {node.node_name} after round {round}"
    last = cluster.settle()
    assert sum(metric(node, "livebind_cluster_conflicts_total") for node in cluster.nodes) > conflicts, \
        "no write raced another node's: the test proved nothing"

    # Every node streamed the same events, and replaying them gives what every node holds.
    states = {name: request("GET", n1.base + f"/models/{name}") for name in ("origin", "mirror")}
    for reader in readers:
        reader.wait_for(lambda events: events and events[-1][0] == str(last), 20, f"events through {last}")
    streamed = [[event for event in reader.snapshot() if event[1] != "snapshot"] for reader in readers]
    assert streamed[0] == streamed[1] == streamed[2]
    assert all(int(event_id) > start for event_id, _, _ in streamed[0])
    for reader in readers:
        replayed = replay(reader.snapshot())
        for name, (_, headers, value) in states.items():
            rev, held = replayed[name]
            assert held == value and f'"{rev}"' == headers["ETag"]
        reader.close()
    for name, text in logs_since(cluster, marks).items():
        assert "dropped" not in text, f"{name}: {text}"


@pytest.mark.node_args("--demo")
def test_swift_writes_outside_a_request_are_rebased_when_another_node_writes_first(fresh_cluster):
    cluster = fresh_cluster
    marks = log_marks(cluster)
    n1 = cluster.nodes[0]
    assert request("PUT", n1.base + "/models/load", {"n": 0})[0] == 201
    cluster.settle()
    stop = threading.Event()
    written = []

    def writer(number):
        # Requests on every node, to the demo's own sensor model too, while the demo ticks on all three.
        count = 0
        while not stop.is_set():
            node = cluster.nodes[(number + count) % 3]
            target = "/models/sensor/load" if number % 2 else "/models/load/n"
            assert request("PUT", node.base + target, count)[0] in (200, 201)
            count += 1
        written.append(count)

    with concurrent.futures.ThreadPoolExecutor(WRITERS) as pool:
        futures = [pool.submit(writer, number) for number in range(WRITERS)]
        # Let the demo tick several times on every node under load.
        readings = EventReader(n1.base, "?model=readings")
        readings.wait_for(lambda events: sum(event in ("insert", "batch") for _, event, _ in events) >= 15, 60, "15 demo ticks")
        readings.close()
        stop.set()
        for future in futures:
            future.result()
    assert sum(written) > 0
    # The demo keeps ticking: compare every node at one sequence, caught between ticks.
    for _ in range(20):
        last = cluster.settle()
        bodies = [{name: request("GET", node.base + f"/models/{name}") for name in ("sensor", "readings", "orders", "load")}
                  for node in cluster.nodes]
        if all(node.applied() == last for node in cluster.nodes):
            break
    tags = [{name: headers["ETag"] for name, (_, headers, _) in body.items()} for body in bodies]
    values = [{name: value for name, (_, _, value) in body.items()} for body in bodies]
    assert tags[0] == tags[1] == tags[2] and values[0] == values[1] == values[2]
    for name, text in logs_since(cluster, marks).items():
        assert "dropped" not in text and "gave up" not in text, f"{name}: {text}"
    assert sum(metric(node, "livebind_cluster_dropped_writes_total") for node in cluster.nodes) == 0
