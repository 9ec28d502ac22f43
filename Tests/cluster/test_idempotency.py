"""Idempotent writes in a cluster (docs/HTTP.md, "Idempotent writes"): the receipt of a write sent with
`Idempotency-Key` rides in the stream with its commit, so a retry on any node, at once or racing, or
after the node restarted from a snapshot, gets the first answer and writes nothing again."""
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


@pytest.mark.node_args("--cluster-snapshot-interval", "20", "--cluster-max-commits", "60")
def test_a_restarted_node_knows_keys_whose_commits_left_the_stream(fresh_cluster):
    cluster = fresh_cluster
    n1, n2, n3 = cluster.nodes
    assert request("PUT", n1.base + "/models/orders", {"items": []})[0] == 201
    status, _, first = post(n1, "early", "e")
    assert status == 200
    for value in range(200):
        assert request("POST", [n1, n2][value % 2].base + "/models/orders/items", value)[0] == 200
    cluster.settle()
    assert cluster.nats[0].stream_state("LIVEBIND")["first_seq"] > 3   # the early write's message is gone
    n3.stop()
    n3.start()
    status, headers, again = post(n3, "early", "e")
    assert (status, again) == (200, first) and headers["Idempotent-Replayed"] == "true"
    cluster.settle()
    assert items(n3).count("e") == 1
