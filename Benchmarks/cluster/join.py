"""Cluster at size (`make bench`, cluster part): how long a fourth node takes to join three that hold
10, 100 and 250 MB of state, and the writes the cluster acknowledges while it joins.

For each size: a fresh cluster (three nats-servers in one JetStream cluster, three nodes; the harness
of Tests/cluster) is filled with models of 1 to 16 MiB (appends of 900 KB), a snapshot every 200
commits. Eight writers then append small values through the three nodes for 5 s (the writes/s
before), then a fourth node starts: the join time is from its start to its /healthz answering with
the cluster's applied sequence (it loads the last snapshot, then the commits after it), and the
writes/s during the join are the writers' while it loads. Prints one JSON object per size and a
markdown table. Usage: python3 Benchmarks/cluster/join.py [SIZE_MB ...]
Environment: LIVEBIND_SERVER (.build/release/livebind-server)."""
import json
import pathlib
import shutil
import sys
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "Tests" / "cluster"))
from cluster import Cluster, Node, fill, make_temp_folder, request  # noqa: E402

NODE_ARGS = ("--cluster-snapshot-interval", "200", "--cluster-max-commits", "20000")


class Writers:
    """Eight threads appending small values through `nodes`; `count` acknowledged writes so far."""

    def __init__(self, nodes):
        self.nodes, self.count, self.stop, self.lock = nodes, 0, threading.Event(), threading.Lock()
        for writer in range(8):
            request("PUT", nodes[writer % 3].base + f"/models/w{writer}", {"log": []})
        self.threads = [threading.Thread(target=self.run, args=(w,), daemon=True) for w in range(8)]
        for thread in self.threads:
            thread.start()

    def run(self, writer):
        value = 0
        while not self.stop.is_set():
            node = self.nodes[(writer + value) % 3]
            try:
                status = request("POST", node.base + f"/models/w{writer}/log", value, timeout=10)[0]
            except OSError:
                status = 0
            if status == 200:
                with self.lock:
                    self.count += 1
            value += 1

    def acknowledged(self):
        with self.lock:
            return self.count

    def close(self):
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=30)


def measure(megabytes):
    folder = make_temp_folder("livebind-join-")
    cluster = Cluster(folder, node_args=NODE_ARGS)
    joining = None
    try:
        cluster.start()
        started = time.monotonic()
        fill(cluster.nodes, megabytes)
        cluster.settle(timeout=300)
        fill_s = time.monotonic() - started
        writers = Writers(cluster.nodes)
        before = writers.acknowledged()
        time.sleep(5)
        before_rate = (writers.acknowledged() - before) / 5
        joining = Node("n4", folder, [server.url for server in cluster.nats], NODE_ARGS)
        joining.startup = 600
        at_start, clock = writers.acknowledged(), time.monotonic()
        joining.start()
        join_s = time.monotonic() - clock
        during_rate = (writers.acknowledged() - at_start) / join_s
        writers.close()
        last = cluster.settle(timeout=300)
        deadline = time.monotonic() + 60
        while joining.applied() != last and time.monotonic() < deadline:
            time.sleep(0.1)
        caught_up = joining.applied() == last
        return {"state_mb": megabytes, "fill_s": round(fill_s, 1), "join_s": round(join_s, 2),
                "writes_per_s_before": round(before_rate), "writes_per_s_during_join": round(during_rate),
                "joined_node_caught_up": caught_up}
    finally:
        if joining is not None:
            joining.close()
        cluster.stop()
        shutil.rmtree(folder, ignore_errors=True)


def main():
    sizes = [int(arg) for arg in sys.argv[1:]] or [10, 100, 250]
    rows = []
    for megabytes in sizes:
        row = measure(megabytes)
        print(json.dumps(row), flush=True)
        rows.append(row)
    print("\n| state | join time of a 4th node | writes/s before | writes/s during the join |")
    print("|---|---|---|---|")
    for row in rows:
        print(f"| {row['state_mb']} MB | {row['join_s']} s | {row['writes_per_s_before']:,} | "
              f"{row['writes_per_s_during_join']:,} |")


if __name__ == "__main__":
    main()
