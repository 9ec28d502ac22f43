"""Bindings in cluster mode: a binding made, disabled or deleted over HTTP on one node reaches every
node through the stream, and a derived change is computed once (by the writing node) and replayed
elsewhere, never written again by another node."""
from cluster import EventReader, request, wait_until


def bindings_on(node):
    return {b["id"]: b for b in request("GET", node.base + "/bindings")[2]["bindings"]}


def test_a_binding_made_over_http_reaches_every_node_and_runs_once_per_commit(cluster):
    n1, n2, n3 = cluster.nodes
    assert request("PUT", n1.base + "/models/src", {"t": 1})[0] == 201
    assert request("PUT", n1.base + "/models/dst", {"copy": None})[0] == 201
    status, headers, body = request("POST", n2.base + "/bindings", {"source": "src.t", "target": "dst.copy"})
    assert status == 201, body
    binding = body["id"]
    cluster.settle()
    for node in cluster.nodes:
        assert binding in bindings_on(node), node.node_name
        assert request("GET", node.base + "/models/dst")[2] == {"copy": 1}
    before = cluster.settle()
    reader = EventReader(n3.base, "?model=dst")
    reader.wait_for(lambda events: events, 10, "the first snapshot")
    for value, node in zip(range(2, 8), [n1, n2, n3, n1, n2, n3]):
        assert request("PUT", node.base + "/models/src/t", value)[0] == 200
    last = cluster.settle()
    # One source commit and one derived commit per write, whichever node wrote: nobody ran the
    # binding a second time.
    assert last - before == 12
    reader.wait_for(lambda events: events[-1][0] == str(last), 10, "the last derived change")
    sets = [data["value"] for _, event, data in reader.snapshot() if event == "set"]
    assert sets == [2, 3, 4, 5, 6, 7]
    assert len({request("GET", node.base + "/models/dst")[1]["ETag"] for node in cluster.nodes}) == 1
    reader.close()

    # Disabled on one node: no node propagates.
    status, _, body = request("PATCH", n3.base + f"/bindings/{binding}", {"enabled": False})
    assert status == 200 and body["enabled"] is False
    cluster.settle()
    for node in cluster.nodes:
        assert bindings_on(node)[binding]["enabled"] is False
    assert request("PUT", n1.base + "/models/src/t", 100)[0] == 200
    cluster.settle()
    assert [request("GET", node.base + "/models/dst")[2] for node in cluster.nodes] == [{"copy": 7}] * 3

    # Deleted on another: gone everywhere.
    assert request("DELETE", n1.base + f"/bindings/{binding}")[0] == 200
    cluster.settle()
    for node in cluster.nodes:
        assert binding not in bindings_on(node)
        assert request("GET", node.base + f"/bindings/{binding}")[0] == 404


def test_the_same_binding_id_on_two_nodes_at_once_is_made_once(cluster):
    import concurrent.futures
    import threading
    n1, n2, _ = cluster.nodes
    assert request("PUT", n1.base + "/models/twin", {"a": 1, "b": 0, "c": 0})[0] == 201
    cluster.settle()
    barrier = threading.Barrier(2)

    def create(pair):
        node, target = pair
        barrier.wait()
        return request("POST", node.base + "/bindings", {"id": "twin", "source": "twin.a", "target": target})[0]

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        statuses = sorted(pool.map(create, [(n1, "twin.b"), (n2, "twin.c")]))
    assert statuses == [201, 409], statuses
    cluster.settle()
    targets = {bindings_on(node)["twin"]["target"] for node in cluster.nodes}
    assert len(targets) == 1


def test_writers_racing_on_a_bound_source_leave_every_target_current(cluster):
    """Writers on every node race on one bound source (their writes share messages and lose races):
    every derived change carries the source's latest value before it, and every node ends with the
    target equal to the source (a write and what its binding derived are one message of the stream, or,
    when another node's message pushed the derived commit out, the binding's catch-up follows it)."""
    import threading
    n1, n2, n3 = cluster.nodes
    assert request("PUT", n1.base + "/models/unit-src", {"t": 0})[0] == 201
    assert request("PUT", n1.base + "/models/unit-dst", {"copy": 0})[0] == 201
    assert request("POST", n2.base + "/bindings", {"source": "unit-src.t", "target": "unit-dst.copy"})[0] == 201
    start = cluster.settle()
    reader = EventReader(n3.base, "", last_event_id=start)
    stop = threading.Event()
    answered, refused = [], []

    def writer(number):
        node, value = cluster.nodes[number % 3], number * 100_000
        while not stop.is_set():
            value += 1
            status, _, body = request("PUT", node.base + "/models/unit-src/t", value)
            if status == 200:
                answered.append(int(body["id"]))
            else:
                refused.append((status, body))

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(9)]
    for thread in threads:
        thread.start()
    wait_until(lambda: len(answered) >= 300, 30, "300 writes")
    stop.set()
    for thread in threads:
        thread.join()
    assert not refused, refused[:3]
    cluster.settle()
    # A derived commit the stream refused (another node's message came first) is made again by its
    # binding's catch-up, in a later message, which a settled cluster may not have published yet: wait
    # for the stream to end with the copy of the source's final value, then check its whole order.
    final_source = request("GET", n1.base + "/models/unit-src/t")[2]

    def sets(events):
        return [(event_id, data) for event_id, event, data in events
                if event == "set" and data.get("model") in ("unit-src", "unit-dst")]

    def ends_with_the_copy(events):
        found = sets(events)
        return found and found[-1][1]["model"] == "unit-dst" and found[-1][1]["value"] == final_source

    try:
        reader.wait_for(ends_with_the_copy, 10, "the last write's derived change")
    except AssertionError:
        states = [(request("GET", node.base + "/models/unit-src")[2], request("GET", node.base + "/models/unit-dst")[2],
                   node.health()["cluster"], request("GET", node.base + "/bindings")[2]) for node in cluster.nodes]
        raise AssertionError(f"the copy of {final_source} never came; the stream ends {sets(reader.snapshot())[-4:]}; "
                             f"the nodes hold {states}")
    changes = sets(reader.snapshot())
    reader.close()
    assert sum(1 for _, data in changes if data["model"] == "unit-src") >= 300
    source = 0
    for event_id, data in changes:
        if data["model"] == "unit-src":
            source = data["value"]
        else:
            assert data["value"] == source, f"event {event_id} copies {data['value']}, the source was {source}"
    final = {request("GET", node.base + "/models/unit-src/t")[2] for node in cluster.nodes}
    copies = {request("GET", node.base + "/models/unit-dst/copy")[2] for node in cluster.nodes}
    assert len(final) == 1 and final == copies
