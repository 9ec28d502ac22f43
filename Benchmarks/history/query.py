#!/usr/bin/env python3
"""Times history queries against a seeded livebind-server (run by Benchmarks/history.sh).

    query.py --base http://127.0.0.1:PORT --model plant --pointer /sensor/temperature \
        --from FIRST_ID --to LAST_ID --db DIR/history.sqlite --server-pid PID [--repeats 20] [--out FILE]

Waits until the history has every write through LAST_ID, then sends each query REPEATS times, the
queries taking turns on one keep-alive connection:
  - buckets of a day in steps of 60 s: 1,440 buckets. The seeded "day" took the server a few seconds of
    wall-clock time, so the step is that span ÷ 1,440 (in ms): the same rows read, the same number of
    buckets as `step=60s` over a real day;
  - the same in steps of 1 h (span ÷ 24: 24 buckets);
  - `step=60s` as written (one bucket here);
  - the raw points (every change, about 86,400).
For each: median and p95 of the whole request (sent until the last byte read), of the time until the
answer's headers arrive (the server builds the whole answer before it sends them, so this is the
server's share plus one loopback round trip), the server's CPU per query (/proc, over all repeats), and
the answer's size. Then, outside the server, the SQLite read the series makes (the same statements on
history.sqlite, read-only, counted inside SQLite so no Python row is made) and EXPLAIN QUERY PLAN of
each statement a series runs. Prints a markdown table; --out keeps everything as JSON.
Standard library only.
"""
import argparse
import datetime
import http.client
import json
import math
import os
import sqlite3
import statistics
import sys
import time
import urllib.parse


def parse_time(text):
    return datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(fraction * len(ordered)) - 1))]


def cpu_seconds(pid):
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Client:
    def __init__(self, base):
        url = urllib.parse.urlsplit(base)
        self.connection = http.client.HTTPConnection(url.hostname, url.port, timeout=60)

    def get(self, target):
        """(status, body, seconds until the headers, seconds until the last byte)."""
        start = time.perf_counter()
        self.connection.request("GET", target)
        response = self.connection.getresponse()
        headers = time.perf_counter()
        body = response.read()
        end = time.perf_counter()
        return response.status, body, headers - start, end - start


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--base", required=True)
    parser.add_argument("--model", required=True)
    parser.add_argument("--pointer", required=True)
    parser.add_argument("--from", dest="first", required=True, type=int)
    parser.add_argument("--to", dest="last", required=True, type=int)
    parser.add_argument("--db", required=True)
    parser.add_argument("--server-pid", type=int)
    parser.add_argument("--repeats", type=int, default=20)
    parser.add_argument("--out")
    args = parser.parse_args()

    client = Client(args.base)
    prefix = f"/models/{args.model}{args.pointer}?history&from={args.first}&to={args.last}"

    # The history is written by a thread of its own, after the commit log: wait until it has the last write.
    deadline = time.monotonic() + 120
    while True:
        status, body, _, _ = client.get(prefix)
        answer = json.loads(body) if status == 200 else {}
        if answer.get("id") == str(args.last):
            break
        if time.monotonic() > deadline:
            sys.exit(f"the history did not reach event {args.last}: {status} {body[:300]!r}")
        time.sleep(0.5)
    points = len(answer["points"])
    span_ms = parse_time(answer["to"]) - parse_time(answer["from"])
    step_day = max(1, math.ceil(span_ms / 1440))
    step_hour = max(1, math.ceil(span_ms / 24))
    queries = [
        ("buckets", f"1,440 buckets (a day at `step=60s`; here `step={step_day}ms`)", f"{prefix}&step={step_day}ms"),
        ("buckets_hour", f"24 buckets (a day at `step=1h`; here `step={step_hour}ms`)", f"{prefix}&step={step_hour}ms"),
        ("buckets_60s", "`step=60s` as written (one or two buckets here)", f"{prefix}&step=60s"),
        ("points", "raw points", prefix),
    ]
    results = {key: {"label": label, "target": target, "total": [], "headers": [], "cpu": 0.0} for key, label, target in queries}
    for key, _, target in queries:          # one untimed run each: the pages are in the cache for all
        client.get(target)
    for _ in range(args.repeats):
        for key, _, target in queries:
            cpu0 = cpu_seconds(args.server_pid) if args.server_pid else 0
            status, body, headers, total = client.get(target)
            cpu1 = cpu_seconds(args.server_pid) if args.server_pid else 0
            if status != 200:
                sys.exit(f"{target}: {status} {body[:300]!r}")
            entry = results[key]
            entry["total"].append(total * 1000)
            entry["headers"].append(headers * 1000)
            entry["cpu"] += cpu1 - cpu0
            entry["bytes"] = len(body)
            answer = json.loads(body)
            entry["count"] = len(answer.get("buckets", answer.get("points", [])))

    sql = sqlite_side(args, args.repeats)
    report = {"points": points, "span_ms": span_ms, "first": args.first, "last": args.last, "repeats": args.repeats,
              "queries": {}, "sqlite": sql}
    print(f"history of {args.pointer}: {points:,} changes between events {args.first} and {args.last}, "
          f"written in {span_ms / 1000:.1f} s; {args.repeats} runs of each query\n")
    print("| query | answer | median | p95 | until the headers: median | server CPU per query |")
    print("|---|---|---:|---:|---:|---:|")
    for key, label, _ in queries:
        entry = results[key]
        summary = {"label": label, "target": entry["target"], "count": entry["count"], "bytes": entry["bytes"],
                   "median_ms": statistics.median(entry["total"]), "p95_ms": percentile(entry["total"], 0.95),
                   "headers_median_ms": statistics.median(entry["headers"]),
                   "cpu_ms": entry["cpu"] * 1000 / args.repeats, "runs_ms": [round(t, 2) for t in entry["total"]]}
        report["queries"][key] = summary
        unit = ("point" if key == "points" else "bucket") + ("s" if summary["count"] != 1 else "")
        print(f"| {label} | {summary['count']:,} {unit}, {summary['bytes'] / 1000:,.0f} kB | {summary['median_ms']:.1f} ms "
              f"| {summary['p95_ms']:.1f} ms | {summary['headers_median_ms']:.1f} ms | {summary['cpu_ms']:.1f} ms |")
    print(f"| SQLite alone: the series' rows read from history.sqlite (outside the server) | {sql['rows']:,} rows "
          f"| {sql['median_ms']:.1f} ms | {sql['p95_ms']:.1f} ms | — | — |")
    print("\nEXPLAIN QUERY PLAN of the statements a series runs:\n")
    for name, plan in sql["plans"].items():
        print(f"- {name}: " + "; ".join(plan))
    print(f"\nhistory.sqlite: {sql['commits']:,} commits, {sql['changes']:,} changes, {sql['bytes'] / 1e6:.0f} MB "
          f"(with its WAL)")
    if args.out:
        json.dump(report, open(args.out, "w"), indent=1)


def sqlite_side(args, repeats):
    """The series' reads (SeriesTracker.follow in Persistence/History/SeriesTracker.swift), timed inside
    SQLite: the rows at the location's root in index order, then those above it and below it."""
    db = sqlite3.connect(f"file:{args.db}?mode=ro", uri=True)
    parts = [c for c in args.pointer.split("/")[1:]]
    above = ["/" + "/".join(parts[:n]) if n else "" for n in range(len(parts) - 1, -1, -1)]
    at = """SELECT sequence, position, time, number FROM changes
            WHERE model = ? AND path = ? AND sequence > ? AND sequence <= ? ORDER BY sequence, position"""
    over = """SELECT sequence, position, time, number FROM changes
              WHERE model = ? AND path = ? AND sequence > ? AND sequence <= ? ORDER BY sequence, position LIMIT ?"""
    below = """SELECT sequence, position, time, number FROM changes
               WHERE model = ? AND path > ? AND path < ? AND sequence > ? AND sequence <= ?
               ORDER BY sequence, position LIMIT ?"""
    at_args = [args.model, args.pointer, args.first, args.last]
    below_args = [args.model, args.pointer + "/", args.pointer + "0", args.first, args.last, 1_000_001]
    times, rows = [], 0
    for _ in range(max(repeats, 5)):
        start = time.perf_counter()
        rows = db.execute(f"SELECT count(*), sum(number) FROM ({at})", at_args).fetchone()[0]
        for path in above:
            rows += db.execute(f"SELECT count(*) FROM ({over})", [args.model, path, args.first, args.last, 1_000_001]).fetchone()[0]
        rows += db.execute(f"SELECT count(*), sum(number) FROM ({below})", below_args).fetchone()[0]
        times.append((time.perf_counter() - start) * 1000)
    statements = {
        "rows at the location": (at, at_args),
        "rows above it (each parent)": (over, [args.model, above[0] if above else "", args.first, args.last, 1_000_001]),
        "rows below it": (below, below_args),
        "an event's time (`to`, `from`)": ("SELECT time FROM commits WHERE sequence <= ? ORDER BY sequence DESC LIMIT 1", [args.last]),
        "the checkpoint before `from`": ("""SELECT sequence, document FROM checkpoints WHERE model = ? AND sequence <= ?
                                           ORDER BY sequence DESC LIMIT 1""", [args.model, args.first]),
        "a commit read whole": ("SELECT revision, record FROM commits WHERE sequence = ?", [args.last]),
    }
    plans = {name: [row[3] for row in db.execute("EXPLAIN QUERY PLAN " + text, values)] for name, (text, values) in statements.items()}
    size = sum(os.path.getsize(args.db + suffix) for suffix in ("", "-wal") if os.path.exists(args.db + suffix))
    return {"rows": rows, "median_ms": statistics.median(times), "p95_ms": percentile(times, 0.95), "plans": plans,
            "commits": db.execute("SELECT count(*) FROM commits").fetchone()[0],
            "changes": db.execute("SELECT count(*) FROM changes").fetchone()[0], "bytes": size}


if __name__ == "__main__":
    main()
