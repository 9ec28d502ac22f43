"""Idempotent writes in a cluster (docs/HTTP.md, "Idempotent writes"): the receipt of a write sent with
`Idempotency-Key` rides in the stream with its commit (a `/bindings` change: with the change), so a
retry on any node, at once or racing, or after the node restarted from a snapshot, gets the first
answer and writes nothing again."""
import threading

import pytest

from cluster import request


def post(node, key, value, path="/models/orders/items"):
    return request("POST", node.base + path, value, headers={"Idempotency-Key": key})


def items(node):
    return request("GET", node.base + "/models/orders/items")[2]


def test_a_retry_on_another_node_gets_the_first_answer(cluster):
    n1, n2, n3 = cluster.nodes
    assert request("PUT", n1.base + "/models/orders", {"items": []})[0] == 201
    status, headers, first = post(n1, "order-1", {"sku": "a"})
    assert status == 200 and "index" in first, first
    for node in (n2, n3, n1):
        status, headers, again = post(node, "order-1", {"sku": "a"})
        assert (status, again) == (200, first) and headers["Idempotent-Replayed"] == "true"
    status, _, problem = post(n3, "order-1", {"sku": "b"})
    assert status == 422 and problem["type"].endswith("idempotency-key-reused")
    cluster.settle()
    assert [items(node) for node in cluster.nodes] == [[{"sku": "a"}]] * 3


def test_one_key_sent_to_every_node_at_once_is_applied_once(cluster):
    n1, _, _ = cluster.nodes
    assert request("PUT", n1.base + "/models/orders", {"items": []})[0] == 200
    for round in range(10):
        barrier, answers = threading.Barrier(6), []

        def racer(node):
            barrier.wait()
            answers.append(post(node, f"race-{round}", round))

        threads = [threading.Thread(target=racer, args=(node,)) for node in cluster.nodes * 2]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(30)
        applied = [body for status, _, body in answers if status == 200]
        assert applied and all(body == applied[0] for body in applied), answers
        assert all(status in (200, 409) for status, _, _ in answers), answers
    cluster.settle()
    assert [items(node) for node in cluster.nodes] == [list(range(10))] * 3


def test_a_write_to_several_models_retried_on_any_node_is_applied_once(cluster):
    n1, n2, n3 = cluster.nodes
    for name in ("left", "right"):
        assert request("PUT", n1.base + f"/models/{name}", {"items": []})[0] in (200, 201)
    body = {"left": {"patch": [{"op": "add", "path": "/items/-", "value": 1}]},
            "right": {"merge": {"seen": True}}}
    status, _, first = request("PATCH", n2.base + "/models", body, headers={"Idempotency-Key": "both-1"})
    assert status == 200 and set(first["models"]) == {"left", "right"}, first
    for node in (n1, n3, n2):
        status, headers, again = request("PATCH", node.base + "/models", body, headers={"Idempotency-Key": "both-1"})
        assert (status, again) == (200, first) and headers["Idempotent-Replayed"] == "true", (status, again)
    cluster.settle()
    assert [request("GET", node.base + "/models/left/items")[2] for node in cluster.nodes] == [[1]] * 3


def bindings(node):
    return [binding["id"] for binding in request("GET", node.base + "/bindings")[2]["bindings"]]


def test_a_binding_change_retried_on_any_node_is_made_once(cluster):
    n1, n2, n3 = cluster.nodes
    assert request("PUT", n1.base + "/models/gauge", {"v": 1, "copy": 0})[0] in (200, 201)
    entry = {"source": "gauge.v", "target": "gauge.copy"}   # no id: made twice, it would be two bindings
    status, headers, first = request("POST", n1.base + "/bindings", entry, headers={"Idempotency-Key": "bind-1"})
    assert status == 201, first
    id = first["id"]
    for node in (n2, n3, n1):
        status, again_headers, again = request("POST", node.base + "/bindings", entry, headers={"Idempotency-Key": "bind-1"})
        assert status == 201 and again_headers["Idempotent-Replayed"] == "true", (status, again)
        assert again_headers["Location"] == headers["Location"] == f"/bindings/{id}"
        assert {k: again[k] for k in ("id", "source", "target", "enabled")} == {k: first[k] for k in ("id", "source", "target", "enabled")}
    for node in (n3, n1, n2):
        status, _, switched = request("PATCH", node.base + f"/bindings/{id}", {"enabled": False},
                                      headers={"Idempotency-Key": "switch-1"})
        assert status == 200 and switched["enabled"] is False, switched
    status, _, gone = request("DELETE", n2.base + f"/bindings/{id}", headers={"Idempotency-Key": "unbind-1"})
    assert status == 200 and gone["id"] == id
    for node in (n3, n1, n2):
        status, again_headers, again = request("DELETE", node.base + f"/bindings/{id}", headers={"Idempotency-Key": "unbind-1"})
        assert status == 200 and again["id"] == id and again_headers["Idempotent-Replayed"] == "true", (status, again)
    cluster.settle()
    assert [id in bindings(node) for node in cluster.nodes] == [False] * 3
    assert [len(bindings(node)) for node in cluster.nodes] == [len(bindings(n1))] * 3


@pytest.mark.node_args("--cluster-snapshot-interval", "20", "--cluster-max-commits", "60")
def test_a_restarted_node_knows_keys_whose_commits_left_the_stream(fresh_cluster):
    cluster = fresh_cluster
    n1, n2, n3 = cluster.nodes
    assert request("PUT", n1.base + "/models/orders", {"items": []})[0] == 201
    status, _, first = post(n1, "early", "e")
    assert status == 200
    entry = {"source": "orders.items", "target": "audit.items"}
    status, _, made = request("POST", n2.base + "/bindings", entry, headers={"Idempotency-Key": "early-binding"})
    assert status == 201, made
    for value in range(200):
        assert request("POST", [n1, n2][value % 2].base + "/models/orders/items", value)[0] == 200
    cluster.settle()
    assert cluster.nats[0].stream_state("LIVEBIND")["first_seq"] > 3   # the early write's message is gone
    n3.stop()
    n3.start()
    status, headers, again = post(n3, "early", "e")
    assert (status, again) == (200, first) and headers["Idempotent-Replayed"] == "true"
    status, headers, again = request("POST", n3.base + "/bindings", entry, headers={"Idempotency-Key": "early-binding"})
    assert status == 201 and again["id"] == made["id"] and headers["Idempotent-Replayed"] == "true", (status, again)
    cluster.settle()
    assert items(n3).count("e") == 1
    assert [bindings(node).count(made["id"]) for node in cluster.nodes] == [1] * 3 and len(set(map(len, map(bindings, cluster.nodes)))) == 1
