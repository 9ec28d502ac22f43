"""Cluster mode on a healthy cluster: one order for everyone, writes on any node, linearizable
If-Match, every node streaming the same events, resumes on another node by Last-Event-ID."""
import concurrent.futures
import threading

from cluster import EventReader, replay, request, wait_until

WRITERS = 8
WRITES_PER_WRITER = 30


def test_every_answer_names_its_node_and_health_shows_the_cluster(cluster):
    for node in cluster.nodes:
        status, headers, body = request("GET", node.base + "/healthz")
        assert status == 200
        assert headers["LiveBind-Node"] == node.node_name
        assert body["status"] == "ok"
        assert body["cluster"]["node"] == node.node_name
        assert body["cluster"]["connected"] is True
        assert body["cluster"]["role"] == "peer"
        status, headers, _ = request("GET", node.base + "/models/missing")
        assert status == 404 and headers["LiveBind-Node"] == node.node_name
        status, _, metrics = request("GET", node.base + "/metrics")
        assert status == 200
        for name in ("livebind_cluster_applied_sequence", "livebind_cluster_lag", "livebind_cluster_connected 1"):
            assert name in metrics


def test_a_write_is_answered_with_its_stream_sequence_and_read_back_on_its_node(cluster):
    n1, n2, n3 = cluster.nodes
    status, headers, body = request("PUT", n1.base + "/models/echo", {"n": 0})
    assert status == 201 and headers["LiveBind-Node"] == "n1"
    first = int(body["id"])
    for round, node in enumerate([n2, n3, n1, n2], start=1):
        status, _, body = request("PUT", node.base + "/models/echo/n", round)
        assert status == 200
        assert int(body["id"]) > first
        first = int(body["id"])
        # The node answered only once it applied its own commit: it reads its write.
        status, headers, value = request("GET", node.base + "/models/echo")
        assert value == {"n": round} and int(headers["LiveBind-Event-ID"]) >= first
    assert cluster.settle() >= first


def test_bad_input_on_a_cluster_node_is_a_problem_and_changes_nothing(cluster):
    n1 = cluster.nodes[0]
    before = cluster.settle()
    status, headers, body = request("PUT", n1.base + "/models/echo", b"{not json")
    assert status == 400 and headers["Content-Type"] == "application/problem+json"
    status, _, body = request("PATCH", n1.base + "/models/echo", [{"op": "test", "path": "/n", "value": "nope"}],
                              headers={"Content-Type": "application/json-patch+json"})
    assert status == 409 or status == 422, body
    assert cluster.settle() == before


def test_eight_writers_over_three_nodes_end_identical_and_equal_to_the_replayed_stream(cluster):
    n1 = cluster.nodes[0]
    assert request("PUT", n1.base + "/models/tally", {"rows": [], "count": 0, "byWriter": {}})[0] == 201
    start = cluster.settle()
    readers = [EventReader(node.base, "?model=tally") for node in cluster.nodes]
    for reader in readers:
        reader.wait_for(lambda events: any(event == "snapshot" for _, event, _ in events), 10, "the first snapshot")
    acknowledged = []
    lock = threading.Lock()

    def writer(number):
        # Writers spread over the three nodes, mixing appends, merges, JSON Patch and If-Match
        # read-modify-writes (retried on 412) of one counter.
        for round in range(WRITES_PER_WRITER):
            node = cluster.nodes[(number + round) % 3]
            kind = round % 3
            if kind == 0:
                status, _, body = request("POST", node.base + "/models/tally/rows", {"w": number, "r": round})
                assert status == 200, body
                with lock:
                    acknowledged.append((number, round))
            elif kind == 1:
                status, _, body = request("PATCH", node.base + "/models/tally/byWriter",
                                          {str(number): round}, headers={"Content-Type": "application/merge-patch+json"})
                assert status == 200, body
            else:
                for _ in range(200):
                    status, headers, value = request("GET", node.base + "/models/tally")
                    patch = [{"op": "test", "path": "/count", "value": value["count"]},
                             {"op": "replace", "path": "/count", "value": value["count"] + 1}]
                    status, _, body = request("PATCH", node.base + "/models/tally", patch,
                                              headers={"Content-Type": "application/json-patch+json",
                                                       "If-Match": headers["ETag"]})
                    if status == 200:
                        break
                    assert status in (409, 412), body
                else:
                    raise AssertionError("an increment never went through")

    with concurrent.futures.ThreadPoolExecutor(WRITERS) as pool:
        list(pool.map(writer, range(WRITERS)))
    last = cluster.settle()

    states = [request("GET", node.base + "/models/tally") for node in cluster.nodes]
    values = [value for _, _, value in states]
    assert values[0] == values[1] == values[2]
    assert len({headers["ETag"] for _, headers, _ in states}) == 1
    increments = sum(1 for round in range(WRITES_PER_WRITER) if round % 3 == 2) * WRITERS
    assert values[0]["count"] == increments, "an If-Match increment was lost or doubled"
    assert sorted((row["w"], row["r"]) for row in values[0]["rows"]) == sorted(acknowledged)
    assert values[0]["byWriter"] == {str(w): max(r for r in range(WRITES_PER_WRITER) if r % 3 == 1) for w in range(WRITERS)}

    # Every node streamed the same events with the same ids, one per sequence, and replaying them
    # gives the state every node holds.
    for reader in readers:
        reader.wait_for(lambda events: events and events[-1][0] == str(last), 20, f"events through {last}")
    streamed = [[event for event in reader.snapshot() if event[1] != "snapshot"] for reader in readers]
    assert streamed[0] == streamed[1] == streamed[2]
    ids = [int(event_id) for event_id, _, _ in streamed[0]]
    assert ids == list(range(start + 1, last + 1)), "a gap or a duplicate in the event ids"
    for reader in readers:
        rev, value = replay(reader.snapshot())["tally"]
        assert value == values[0] and f'"{rev}"' == states[0][1]["ETag"]
        reader.close()


def test_if_match_conflicts_across_nodes_get_412(cluster):
    n1 = cluster.nodes[0]
    status, headers, _ = request("PUT", n1.base + "/models/race", {"owner": None})
    assert status == 201
    for round in range(8):
        revision = request("GET", n1.base + "/models/race")[1]["ETag"]
        cluster.settle()
        barrier = threading.Barrier(3)

        def claim(node):
            barrier.wait()
            return request("PUT", node.base + "/models/race/owner", f"{node.node_name}-{round}",
                           headers={"If-Match": revision})[0]

        with concurrent.futures.ThreadPoolExecutor(3) as pool:
            statuses = list(pool.map(claim, cluster.nodes))
        assert sorted(statuses) == [200, 412, 412], statuses
    cluster.settle()
    owners = {request("GET", node.base + "/models/race")[2]["owner"] for node in cluster.nodes}
    assert len(owners) == 1


def test_a_client_resumes_on_another_node_by_last_event_id(cluster):
    n1, n2, n3 = cluster.nodes
    assert request("PUT", n1.base + "/models/resume", {"items": []})[0] == 201
    cluster.settle()
    watcher = EventReader(n3.base, "?model=resume")
    first = EventReader(n1.base, "?model=resume")
    for number in range(10):
        assert request("POST", cluster.nodes[number % 3].base + "/models/resume/items", number)[0] == 200
    seen = first.wait_for(lambda events: [e for e in events if e[1] == "insert" and e[2]["value"] == 9], 10,
                          "ten inserts on n1")
    resume_from = first.snapshot()[-1][0]
    first.close()
    for number in range(10, 20):
        assert request("POST", cluster.nodes[number % 3].base + "/models/resume/items", number)[0] == 200
    last = cluster.settle()
    second = EventReader(n2.base, "?model=resume", last_event_id=resume_from)
    second.wait_for(lambda events: events and events[-1][0] == str(last), 10, "the resumed stream caught up")
    watcher.wait_for(lambda events: events and events[-1][0] == str(last), 10, "the watcher caught up")
    resumed = second.snapshot()
    assert all(event != "snapshot" and event != "resync" for _, event, _ in resumed), resumed
    expected = [event for event in watcher.snapshot() if event[0] and int(event[0]) > int(resume_from)]
    assert resumed == expected
    assert [data["value"] for _, _, data in resumed] == list(range(10, 20))
    second.close()
    watcher.close()
    assert seen
