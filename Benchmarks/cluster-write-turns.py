"""Acknowledged writes/s of cluster mode's optimistic write turns (docs/ARCHITECTURE.md, "Cluster mode").

Starts the Tests/cluster cluster (three nats-servers, three nodes) on loopback and runs, for each
case, W writers doing POST appends for a few seconds, spread over the nodes or all on one node, then
prints writes/s, p50/p99 latency and the conflicts (writes run again) per acknowledged write.
Usage: LIVEBIND_SERVER=.build/release/livebind-server .venv/bin/python Benchmarks/cluster-write-turns.py
"""
import pathlib
import shutil
import statistics
import sys
import threading
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "Tests/cluster"))
from cluster import Cluster, make_temp_folder, request  # noqa: E402

SECONDS = 5


def conflicts(cluster):
    total = 0
    for node in cluster.nodes:
        for line in request("GET", node.base + "/metrics")[2].splitlines():
            if line.startswith("livebind_cluster_conflicts_total"):
                total += int(line.split()[1])
    return total


def run(cluster, writers, spread, model):
    request("PUT", cluster.nodes[0].base + f"/models/{model}", {"items": []})
    cluster.settle()
    latencies, stop, lock = [], threading.Event(), threading.Lock()

    def writer(number):
        mine = []
        value = 0
        while not stop.is_set():
            node = cluster.nodes[(number + value) % 3] if spread else cluster.nodes[0]
            started = time.perf_counter()
            status = request("POST", node.base + f"/models/{model}/items", value)[0]
            if status == 200:
                mine.append(time.perf_counter() - started)
            value += 1
        with lock:
            latencies.extend(mine)

    before = conflicts(cluster)
    threads = [threading.Thread(target=writer, args=(n,)) for n in range(writers)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    time.sleep(SECONDS)
    stop.set()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    latencies.sort()
    retried = conflicts(cluster) - before
    print(f"{writers:>3} writers, {'spread over 3 nodes' if spread else 'all on one node   '}: "
          f"{len(latencies) / elapsed:7.0f} writes/s, p50 {statistics.median(latencies) * 1000:5.1f} ms, "
          f"p99 {latencies[int(len(latencies) * 0.99)] * 1000:6.1f} ms, {retried / max(1, len(latencies)):.2f} conflicts per write",
          flush=True)


def main():
    folder = make_temp_folder("livebind-cluster-bench-")
    cluster = Cluster(folder)
    try:
        cluster.start()
        for writers, spread in [(1, False), (8, False), (8, True), (32, False), (32, True)]:
            run(cluster, writers, spread, f"bench{writers}{int(spread)}")
    finally:
        cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
