"""Cluster mode under faults: kill -9 of the NATS stream leader and of a LiveBind node mid-load lose
no acknowledged write; a stopped node catches up; without quorum writes get 503, not a hang; a node
cut off from NATS says so and refuses writes, then recovers."""
import signal
import threading
import time

from cluster import request, wait_until

STREAM = "LIVEBIND"


class Load:
    """Writers appending unique numbers to `load/items` through the given targets until stopped;
    `acknowledged` holds every number answered 200."""

    def __init__(self, targets, writers=4):
        self.targets = targets
        self.acknowledged = set()
        self.refused = 0
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._write, args=(number, writers), daemon=True)
                        for number in range(writers)]

    def start(self):
        for thread in self.threads:
            thread.start()
        return self

    def _write(self, number, writers):
        value = number
        while not self.stopping.is_set():
            target = self.targets()[value % len(self.targets())]
            try:
                status, _, _ = request("POST", target + "/models/load/items", value, timeout=20)
            except OSError:
                status = None
            with self.lock:
                if status == 200:
                    self.acknowledged.add(value)
                else:
                    self.refused += 1
            value += writers
            time.sleep(0.005)

    def count(self):
        with self.lock:
            return len(self.acknowledged)

    def stop(self):
        self.stopping.set()
        for thread in self.threads:
            thread.join(timeout=60)
            assert not thread.is_alive(), "a writer hung"


def items_on_every_node(cluster):
    cluster.settle(timeout=60)
    lists = [request("GET", node.base + "/models/load/items")[2] for node in cluster.live_nodes()]
    assert all(items == lists[0] for items in lists), "the nodes disagree"
    return lists[0]


def test_kill_9_of_the_stream_leader_mid_load_loses_no_acknowledged_write(fresh_cluster):
    cluster = fresh_cluster
    assert request("PUT", cluster.nodes[0].base + "/models/load", {"items": []})[0] == 201
    load = Load(lambda: [node.base for node in cluster.nodes]).start()
    wait_until(lambda: load.count() >= 100, 30, "100 writes before the kill")
    leader_name = wait_until(lambda: cluster.nats[0].stream_leader(STREAM), 10, "the stream's leader")
    leader = next(server for server in cluster.nats if f"n{server.index}" == leader_name)
    leader.kill(signal.SIGKILL)
    before = load.count()
    # Writes go on after the election.
    wait_until(lambda: load.count() >= before + 100, 60, "100 writes after the leader's kill")
    load.stop()
    items = items_on_every_node(cluster)
    assert load.acknowledged <= set(items), f"lost: {sorted(load.acknowledged - set(items))[:10]}"
    assert len(items) == len(set(items)), "a write was applied twice"


def test_kill_9_of_a_node_mid_load_loses_no_acknowledged_write(fresh_cluster):
    cluster = fresh_cluster
    assert request("PUT", cluster.nodes[0].base + "/models/load", {"items": []})[0] == 201
    load = Load(lambda: [cluster.nginx.base]).start()
    wait_until(lambda: load.count() >= 100, 30, "100 writes through nginx before the kill")
    cluster.nodes[1].kill(signal.SIGKILL)
    before = load.count()
    wait_until(lambda: load.count() >= before + 100, 60, "100 writes through nginx after the kill")
    load.stop()
    items = items_on_every_node(cluster)
    assert load.acknowledged <= set(items), f"lost: {sorted(load.acknowledged - set(items))[:10]}"
    assert len(items) == len(set(items))


def test_a_stopped_node_catches_up_when_it_comes_back(fresh_cluster):
    cluster = fresh_cluster
    n1, n2, n3 = cluster.nodes
    assert request("PUT", n1.base + "/models/load", {"items": []})[0] == 201
    cluster.settle()
    n3.stop()
    for value in range(200):
        assert request("POST", [n1, n2][value % 2].base + "/models/load/items", value)[0] == 200
    n3.start()
    items = items_on_every_node(cluster)
    assert items == sorted(items) or sorted(items) == list(range(200))
    assert sorted(request("GET", n3.base + "/models/load/items")[2]) == list(range(200))
    # And it takes writes again, ordered after everything it missed.
    status, _, body = request("POST", n3.base + "/models/load/items", 200)
    assert status == 200 and int(body["id"]) == cluster.settle()


def test_without_quorum_writes_get_503_and_resume_after(fresh_cluster):
    cluster = fresh_cluster
    n1 = cluster.nodes[0]
    assert request("PUT", n1.base + "/models/load", {"items": []})[0] == 201
    cluster.settle()
    survivor = cluster.nats[0]
    for server in cluster.nats[1:]:
        server.kill(signal.SIGKILL)
    # The request's own timeout (15 s) fails the test if the node hangs instead of answering.
    status, headers, body = request("POST", n1.base + "/models/load/items", 1)
    assert status == 503, body
    assert headers["Content-Type"] == "application/problem+json"
    assert body["type"] == "urn:livebind:problem:cluster-unavailable"
    assert "Retry-After" in headers
    for server in cluster.nats[1:]:
        server.start()

    def written():
        status, _, _ = request("POST", n1.base + "/models/load/items", 2)
        return status == 200
    wait_until(written, 60, "a write after the quorum came back")
    items = items_on_every_node(cluster)
    assert 2 in items and survivor.alive


def test_a_node_cut_off_from_nats_says_so_and_refuses_writes(fresh_cluster):
    cluster = fresh_cluster
    n1 = cluster.nodes[0]
    assert request("PUT", n1.base + "/models/load", {"items": [0]})[0] == 201
    cluster.settle()
    for server in cluster.nats:
        server.kill(signal.SIGKILL)

    def cut_off():
        status, _, body = request("GET", n1.base + "/healthz")
        return status == 503 and body
    health = wait_until(cut_off, 30, "/healthz says the node is cut off")
    assert health["status"] == "unavailable" and health["cluster"]["connected"] is False
    assert "livebind_cluster_connected 0" in request("GET", n1.base + "/metrics")[2]
    status, _, body = request("POST", n1.base + "/models/load/items", 1)
    assert status == 503 and body["type"] == "urn:livebind:problem:cluster-unavailable"
    # Reads go on from what the node holds.
    assert request("GET", n1.base + "/models/load/items")[2] == [0]
    for server in cluster.nats:
        server.start()
    wait_until(lambda: request("GET", n1.base + "/healthz")[0] == 200, 60, "/healthz ok again")

    def written():
        return request("POST", n1.base + "/models/load/items", 2)[0] == 200
    wait_until(written, 60, "a write after NATS came back")
    assert items_on_every_node(cluster) == [0, 2]
