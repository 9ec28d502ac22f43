#!/usr/bin/env python3
"""The tables of Benchmarks/history.sh from its results directory (writes/, seed.json, queries.md).

    report.py DIR

Writes: the median writes/s of each case's repeats (writes.sh's CASE-cCONNS-REPEAT.json), with the
server CPU per write, and the ratio of each case with the default history to the same case with
`--history 0`. Queries: query.py's table as it printed it.
"""
import glob
import json
import os
import re
import statistics
import sys

PAIRS = [("lb_data", "lb_data_h0", "tiny model"), ("lb_data_big", "lb_data_big_h0", "1 MB model")]


def load(directory):
    runs = {}
    for path in glob.glob(os.path.join(directory, "*.json")):
        match = re.fullmatch(r"(.+)-c(\d+)-(\d+)\.json", os.path.basename(path))
        if match:
            runs.setdefault((match[1], int(match[2])), []).append(json.load(open(path)))
    return runs


def summary(runs):
    rps = [r["rps"] for r in runs]
    cpu = [r["server_cpu_s"] / r["requests"] * 1e6 for r in runs if r.get("requests")]
    return statistics.median(rps), rps, statistics.median(cpu) if cpu else float("nan")


def main():
    directory = sys.argv[1]
    runs = load(os.path.join(directory, "writes"))
    if runs:
        print("| durable writes (`--data`) | default history (`7d,1GB`) | `--history 0` | ratio | goal |")
        print("|---|---:|---:|---:|---|")
        for with_history, without, label in PAIRS:
            for conns in sorted({c for case, c in runs if case == with_history}):
                a, b = runs.get((with_history, conns)), runs.get((without, conns))
                if not a or not b:
                    continue
                (ma, ra, ca), (mb, rb, cb) = summary(a), summary(b)
                cell = lambda m, r, c: f"{m:,.0f}/s ({', '.join(f'{x:,.0f}' for x in sorted(r))}; {c:.1f} µs CPU)"
                print(f"| {label}, {conns} writer{'s' * (conns > 1)} | {cell(ma, ra, ca)} | {cell(mb, rb, cb)} "
                      f"| **{ma / mb:.2f}** | ≥ 0.90 |")
        print("\nwrites/s: median of the repeats (each repeat in brackets), server CPU per write: median.\n")
    seed = os.path.join(directory, "seed.json")
    if os.path.exists(seed) and os.path.getsize(seed):
        s = json.load(open(seed))
        print(f"seeding: {s['writes']:,} JSON Patch writes ({s['failed']} failed) in {s['seconds']:.1f} s, "
              f"{s['writes'] / s['seconds']:,.0f} writes/s\n")
    queries = os.path.join(directory, "queries.md")
    if os.path.exists(queries):
        print(open(queries).read().rstrip())


if __name__ == "__main__":
    main()
