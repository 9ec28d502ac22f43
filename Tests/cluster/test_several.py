"""A write to several models (`PATCH /models`) in a cluster: one message of the stream, so every node
has all of it or none, with one event id; per-model preconditions race correctly across nodes."""
import threading

from cluster import EventReader, request


def test_a_write_to_several_models_reaches_every_node_whole(cluster):
    n1, n2, n3 = cluster.nodes
    assert request("PUT", n1.base + "/models/ledger-a", {"balance": 100})[0] == 201
    assert request("PUT", n1.base + "/models/ledger-b", {"balance": 0})[0] == 201
    start = cluster.settle()
    reader = EventReader(n3.base, "?model=ledger-a&model=ledger-b", last_event_id=start)
    ids = []
    for amount in range(1, 11):
        a = request("GET", n2.base + "/models/ledger-a")[2]["balance"]
        b = request("GET", n2.base + "/models/ledger-b")[2]["balance"]
        status, _, body = request("PATCH", cluster.nodes[amount % 3].base + "/models",
                                  {"ledger-a": {"merge": {"balance": a - amount}}, "ledger-b": {"merge": {"balance": b + amount}}})
        assert status == 200, body
        assert body["models"]["ledger-a"]["id"] == body["models"]["ledger-b"]["id"] == body["id"]
        ids.append(body["id"])
        cluster.settle()
    last = cluster.settle()
    reader.wait_for(lambda events: any(event_id == str(last) for event_id, _, _ in events), 10, "the last event")
    sets = [(event_id, data["model"]) for event_id, event, data in reader.snapshot() if event == "set"]
    reader.close()
    # On another node too, each write is one group: its first event without an id, its last with the
    # write's id.
    assert sets == [pair for write in ids for pair in ((None, "ledger-a"), (write, "ledger-b"))]
    for node in cluster.nodes:
        a = request("GET", node.base + "/models/ledger-a")[2]["balance"]
        b = request("GET", node.base + "/models/ledger-b")[2]["balance"]
        assert (a, b) == (45, 55) and a + b == 100


def test_per_model_preconditions_race_across_nodes(cluster):
    n1, n2, _ = cluster.nodes
    assert request("PUT", n1.base + "/models/seat", {"taken": None})[0] in (200, 201)
    assert request("PUT", n1.base + "/models/wallet", {"paid": []})[0] in (200, 201)
    cluster.settle()
    seat_rev = int(request("GET", n1.base + "/models/seat")[1]["ETag"].strip('"'))
    barrier, statuses = threading.Barrier(2), []

    def book(node, who):
        barrier.wait()
        statuses.append(request("PATCH", node.base + "/models", {
            "seat": {"merge": {"taken": who}, "ifMatch": seat_rev},
            "wallet": {"patch": [{"op": "add", "path": "/paid/-", "value": who}]}})[0])

    threads = [threading.Thread(target=book, args=(node, who)) for node, who in ((n1, "ann"), (n2, "bob"))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert sorted(statuses) == [200, 412], statuses
    cluster.settle()
    for node in cluster.nodes:
        taken = request("GET", node.base + "/models/seat")[2]["taken"]
        assert request("GET", node.base + "/models/wallet")[2]["paid"] == [taken]
