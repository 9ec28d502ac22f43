#!/usr/bin/env python3
"""Turns the raw results of Benchmarks/run.sh into ONE markdown table with ratios against the anchors.

Inputs (all optional; missing parts are left out of the table):
  --engine FILE...   markdown output of `swift package benchmark --format markdown --scale`, one per run
  --fanout DIR       sseload JSON files NAME-cSUBS-rRATE-REPEAT.json and idle-NAME-REPEAT.json (fanout.sh)
  --browser FILE     stdout of Benchmarks/browser/bench_dom.py (JSON object lines are read)
  --writes DIR       writes.sh JSON files CASE-cCONNS-REPEAT.json and streams-sN-cCONNS-REPEAT.json
  --cluster DIR      cluster.sh JSON files fanout-SERVER-rRATE-REPEAT.json, writes-SERVER-cCONNS-REPEAT.json
                     (and livebind-skipped.txt when the LiveBind side was not measured)
Engine figures are the median over runs of each run's median sample; fan-out and write figures are
medians over repeats. The writes also get a table of their own, writes/s and p50 by concurrency.
"""
import argparse, glob, json, os, re, statistics, sys

# Operations per sample (the benchmark's scaling factor); every other benchmark does 1,000.
OPS_PER_SAMPLE = {"snapshot/encode-1MiB": 1, "json/parse-and-free/livebind": 1,
                  **{f"json/{op}/{who}": 1 for op in ("encode", "parse")
                     for who in ("livebind", "jsonserialization", "simdjson")}}
MODEL_BYTES = 1 << 20  # the JSON benchmarks' model: as many rows as fit in 1 MiB of text
UNIT = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9}
TIME = {"ns": 1, "us": 1e3, "μs": 1e3, "ms": 1e6, "s": 1e9}


def parse_engine(path):
    """{benchmark: {"ns": per-op p50, "mallocs": per-op p50}} from one markdown run."""
    out, name = {}, None
    for line in open(path, encoding="utf-8"):
        if line.startswith("### "):
            name = line[4:].strip()
            continue
        if not (name and line.startswith("| ")):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 9 or cells[0] in ("Metric",) or cells[0].startswith(":"):
            continue
        label, p50 = cells[0], float(cells[3])
        ops = OPS_PER_SAMPLE.get(name, 1000)
        units = re.findall(r"\(([^)]*)\)", label)
        if label.startswith("Time (wall clock)"):
            scale = TIME.get(units[-1], 1) if len(units) > 1 else 1
            out.setdefault(name, {})["ns"] = p50 * scale / ops
        elif label.startswith("Malloc (total)"):
            scale = UNIT.get(units[-1], 1) if len(units) > 1 else 1
            out.setdefault(name, {})["mallocs"] = p50 * scale / ops
    return out


def median_runs(runs):
    merged = {}
    for run in runs:
        for name, metrics in run.items():
            for key, value in metrics.items():
                merged.setdefault(name, {}).setdefault(key, []).append(value)
    return {n: {k: statistics.median(v) for k, v in m.items()} for n, m in merged.items()}


def fmt_time(ns):
    if ns is None:
        return "—"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.2f} µs"
    return f"{ns:.1f} ns"


def fmt_ratio(a, b):
    return f"{a / b:.2f}" if a is not None and b else "—"


def engine_rows(e):
    rows = []
    def cell(name):
        m = e.get(name)
        if not m:
            return None, "not measured"
        return m.get("ns"), f"{fmt_time(m.get('ns'))}, {m.get('mallocs', float('nan')):.2f} mallocs"
    lb, lb_cell = cell("set/livebind-observe")
    for anchor, label, target in [
        ("set/opencombine-sink", "OpenCombine CurrentValueSubject + sink", "≤ 1.0 (aim ≤ 0.5); 0 mallocs"),
        ("set/closure-floor", "plain stored closure (floor)", "floor"),
        ("set/observation-tracking", "withObservationTracking re-registration", "< 1.0"),
    ]:
        a, a_cell = cell(anchor)
        rows.append(("engine", "set via pre-parsed path + 1 observer, per op", lb_cell,
                     f"{label}: {a_cell}", fmt_ratio(lb, a), target))
    hop, hop_cell = cell("binding/livebind-hop")
    a, a_cell = cell("binding/opencombine-map-hop")
    rows.append(("engine", "one-way binding hop (set → transform → target set → observer)", hop_cell,
                 f"OpenCombine map → subject → sink: {a_cell}", fmt_ratio(hop, a), "≤ 1.0"))
    for op in ("append", "remove-first", "insert-first"):
        small, small_cell = cell(f"array/{op}/1000")
        large, large_cell = cell(f"array/{op}/100000")
        rows.append(("engine", f"array {op}, 100,000 vs 1,000 elements", large_cell,
                     f"same at 1,000: {small_cell}", fmt_ratio(large, small), "flat (≈ 1.0)"))
    for name, label in [("patch/json-patch-10-ops", "JSON Patch, 10 operations"),
                        ("patch/merge-patch-50-keys", "merge patch of a 50-key object"),
                        ("snapshot/encode-1MiB", "snapshot encoding of a 1 MiB model")]:
        ns, c = cell(name)
        if name.startswith("snapshot") and ns:
            c += f" ({(1 << 20) / (ns / 1e9) / 1e6:.0f} MB/s)"
        rows.append(("engine", label, c, "—", "—", "—"))
    rows += json_rows(e)
    return rows


def json_rows(e):
    """LiveBind's JSON encoding and parsing of the 1 MiB model against JSONSerialization and simdjson."""
    rows = []
    def mbps(ns):
        return MODEL_BYTES / (ns / 1e9) / 1e6 if ns else None
    for op, target in (("encode", 400), ("parse", 300)):
        lb = e.get(f"json/{op}/livebind")
        if not lb:
            continue
        lb_ns = lb.get("ns")
        lb_cell = f"{fmt_time(lb_ns)}, {mbps(lb_ns):.0f} MB/s, {lb.get('mallocs', float('nan')):.0f} mallocs"
        for who, label, ratio_target in (("jsonserialization", "Foundation JSONSerialization", "≥ 2×"),
                                         ("simdjson", "simdjson (reference)", "—")):
            a = e.get(f"json/{op}/{who}")
            a_ns = a.get("ns") if a else None
            a_cell = (f"{label}: {fmt_time(a_ns)}, {mbps(a_ns):.0f} MB/s, {a.get('mallocs', float('nan')):.0f} mallocs"
                      if a_ns else f"{label}: not measured")
            speedup = f"{a_ns / lb_ns:.2f}× faster" if a_ns and lb_ns else "—"
            rows.append(("engine", f"JSON {op} of the 1 MiB model", lb_cell, a_cell, speedup,
                         f"{ratio_target}; ≥ {target} MB/s"))
    both = e.get("json/parse-and-free/livebind")
    if both and both.get("ns"):
        rows.append(("engine", "JSON parse of the 1 MiB model, freeing the value inside the clock",
                     f"{fmt_time(both['ns'])}, {mbps(both['ns']):.0f} MB/s", "—", "—", "for the record"))
    return rows


def read_runs(directory, *patterns):
    """(match, run) for each readable JSON result in `directory` whose name one of `patterns` matches."""
    for path in glob.glob(os.path.join(directory, "*.json")):
        name = os.path.basename(path)
        m = next((m for m in (re.match(p, name) for p in patterns) if m), None)
        if not m:
            continue
        try:
            with open(path) as f:
                yield m, json.load(f)
        except (OSError, ValueError):
            continue


def load_fanout(directory):
    runs = {}
    for m, r in read_runs(directory, r"(\w+)-c(\d+)-r(\d+)-(\d+)\.json$"):
        runs.setdefault((int(m[2]), int(m[3])), {}).setdefault(m[1], []).append(r)
    return runs


def summarize(results):
    """Median figures over repeats of one server at one configuration."""
    med = lambda f: statistics.median(f(r) for r in results)
    delivered = med(lambda r: r["delivered_per_s"])
    cpu = med(lambda r: r.get("server_cpu_pub_s", 0.0))
    unique = med(lambda r: r["unique"])
    return {
        "rate": delivered, "p50": med(lambda r: r["lat_ms"]["p50"]), "p99": med(lambda r: r["lat_ms"]["p99"]),
        "lost": max(r["lost"] for r in results), "rss": med(lambda r: r.get("server_hwm_kb", 0)) / 1024,
        "cpu": cpu, "cpu_per_event_us": 1e6 * cpu / unique if unique else None, "n": len(results),
    }


def fanout_cell(s):
    if not s:
        return "not measured"
    per = f"{s['cpu_per_event_us']:.2f} µs/ev" if s["cpu_per_event_us"] else "—"
    return (f"{s['rate'] / 1e3:.0f}k ev/s, p50 {s['p50']:.1f} / p99 {s['p99']:.1f} ms, lost {s['lost']}, "
            f"{s['rss']:.0f} MiB, CPU {s['cpu']:.1f} s ({per}), n={s['n']}")


def fanout_rows(directory):
    rows = []
    for (subs, rate), by_server in sorted(load_fanout(directory).items(), key=lambda kv: (kv[0][0], kv[0][1] == 0)):
        lb, nc, fl = (summarize(by_server[k]) if k in by_server else None for k in ("livebind", "nchan", "ssefloor"))
        ratio = "—"
        if lb and nc:
            ratio = (f"vs Nchan: ev/s {lb['rate'] / nc['rate']:.2f}, p99 {lb['p99'] / nc['p99']:.2f}, "
                     f"RSS {lb['rss'] / nc['rss']:.2f}")
        if lb and fl:
            ratio += f"; vs ssefloor: ev/s {lb['rate'] / fl['rate']:.2f}"
        anchor = "Nchan: " + fanout_cell(nc)
        if fl:
            anchor += "<br>ssefloor (ceiling): " + fanout_cell(fl)
        target = "ev/s ≥ 1.0 (aim ≥ 2.0), p99 ≤ 1.0, RSS ≤ 1.0, 0 lost" if subs >= 1000 else "0 lost"
        label = f"fan-out: {subs:,} subscribers, 2,000 × 200 B at {'max rate' if rate == 0 else f'{rate:,}/s'}"
        rows.append(("fan-out", label, fanout_cell(lb), anchor, ratio, target))
    idle = {}  # server: each numeric field's median over the repeats (idle-SERVER-REPEAT.json)
    for server in ("livebind", "nchan", "livebind_quiet", "nchan_ping"):
        runs = []
        for path in glob.glob(os.path.join(directory, f"idle-{server}-*.json")):
            try:
                runs.append(json.load(open(path)))
            except (OSError, ValueError):
                pass
        if runs:
            idle[server] = {key: statistics.median(run[key] for run in runs) for key in runs[0]
                            if all(isinstance(run.get(key), (int, float)) for run in runs)}
            idle[server]["n"] = len(runs)
    cell = lambda r: (f"{r['open']:,.0f} open, {r['rss_per_stream_kb']:.1f} kB/stream, CPU {r['idle_cpu_s']:.2f} s "
                      f"= {r['idle_cpu_pct']:.2f} % over {r['idle_s']:.0f} s, n={r['n']}") if r else "not measured"
    # Each row pairs the two servers doing the same work: 15 s heartbeats on every stream, or none.
    for lb_key, nc_key, label, anchor in (
            ("livebind", "nchan_ping", "heartbeat every 15 s", "Nchan with 15 s pings"),
            ("livebind_quiet", "nchan", "no heartbeat due (`--heartbeat 3600`)", "Nchan as shipped, no pings")):
        lb, nc = idle.get(lb_key), idle.get(nc_key)
        if not (lb or nc):
            continue
        ratio = f"RSS/stream {fmt_ratio(lb and lb['rss_per_stream_kb'], nc and nc['rss_per_stream_kb'])}"
        if lb and nc and nc["idle_cpu_s"] > 0:
            ratio += f", CPU {lb['idle_cpu_s'] / nc['idle_cpu_s']:.2f}"
        rows.append(("fan-out", f"{(lb or nc)['streams']:,.0f} idle streams, {label}", cell(lb), f"{anchor}: " + cell(nc),
                     ratio, "< 20 kB/stream, 0 % CPU"))
    return rows


def slope(points):
    """Least-squares slope of (x, y) points, or None with fewer than two distinct x."""
    if len({x for x, _ in points}) < 2:
        return None
    mx = statistics.mean(x for x, _ in points)
    my = statistics.mean(y for _, y in points)
    return sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x, _ in points)


def ceiling_rows(directory):
    """The stream ceiling (run.sh's `ceiling` part): N streams each getting every event of a model written
    10 times a second, by server; then the slope of server memory and CPU over the stream count."""
    rows, points = [], {}
    for (subs, rate), by_server in sorted(load_fanout(directory).items()):
        lb, nc = (summarize(by_server[k]) if k in by_server else None for k in ("livebind", "nchan"))
        for name, s in (("livebind", lb), ("nchan", nc)):
            if s:
                points.setdefault(name, []).append((subs, s))
        ratio = (f"RSS {lb['rss'] / nc['rss']:.2f}, CPU {lb['cpu'] / nc['cpu']:.2f}, p99 {lb['p99'] / nc['p99']:.2f}"
                 if lb and nc and nc["cpu"] else "—")
        rows.append(("ceiling", f"{subs:,} streams, every event of 300 × 200 B at {rate}/s", fanout_cell(lb),
                     "Nchan: " + fanout_cell(nc), ratio, "0 lost"))
    cells = {}
    for name, pts in points.items():
        held = statistics.median(r["rate"] / n for n, r in pts)  # events a second each stream got
        kb = slope([(n, r["rss"] * 1024) for n, r in pts])
        cpu = slope([(n, r["cpu"]) for n, r in pts])
        per_event = cpu and held and 1e6 * cpu / (held * 30)  # a run publishes for 30 s
        cells[name] = (f"{kb:.1f} kB per stream, {per_event:.1f} µs of CPU per delivered event" if kb and per_event
                       else "not enough counts")
    if cells:
        rows.append(("ceiling", "slope over the counts: memory, and marginal CPU (batching lowers it as load grows)", cells.get("livebind", "not measured"),
                     "Nchan: " + cells.get("nchan", "not measured"), "—", "≤ 10 kB per idle stream"))
    return rows


WRITE_CASES = [  # (case in writes.sh, label)
    ("lb_mem", "LiveBind in memory, tiny model"),
    ("lb_data", "LiveBind `--data`, tiny model"),
    ("lb_mem_big", "LiveBind in memory, 1 MB model"),
    ("lb_data_big", "LiveBind `--data`, 1 MB model"),
    ("nchan", "nginx + Nchan publish"),
    ("redis", "Redis 7 `appendfsync always` SET"),
    ("floor_mem", "writefloor (bare libmicrohttpd), in memory"),
    ("floor_data", "writefloor, SQLite group commit in its own loop"),
    ("floor_async", "writefloor, SQLite group commit on a sync thread, two loops serving"),
]


def load_writes(directory):
    """{(case, conns): summary} and {(streams, conns): summary}: medians over the repeats."""
    runs, stream_runs = {}, {}
    for m, r in read_runs(directory, r"streams-s(\d+)-c(\d+)-\d+\.json$", r"(\w+?)-c(\d+)-\d+\.json$"):
        streams = m.string.startswith("streams-")
        target = stream_runs if streams else runs
        key = (int(m[1]) if streams else m[1], int(m[2]))
        target.setdefault(key, []).append(r)

    def summary(results):
        med = lambda key: statistics.median(r[key] for r in results)
        s = {"rps": med("rps"), "p50": med("p50_ms"), "p99": med("p99_ms"), "n": len(results),
             "errors": max(sum(r.get("errors", {}).values()) for r in results)}
        if any("streams_closed" in r for r in results):
            s["closed"] = max(r.get("streams_closed", 0) for r in results)
        return s
    return ({k: summary(v) for k, v in runs.items()}, {k: summary(v) for k, v in stream_runs.items()})


def write_cell(s):
    if not s:
        return "not measured"
    extra = f", {s['errors']} errors" if s["errors"] else ""
    return f"{s['rps']:,.0f} writes/s, p50 {s['p50']:.2f} / p99 {s['p99']:.2f} ms{extra}, n={s['n']}"


def write_rows(directory):
    runs, stream_runs = load_writes(directory)
    rows = []
    conns = sorted({c for _, c in runs} | {c for _, c in stream_runs})
    for c in conns:
        get = lambda case: runs.get((case, c))
        pairs = [
            ("lb_mem", "nchan", "in memory, tiny model", "Nchan publish", "≥ 1.0"),
            ("lb_data", "redis", "`--data`, tiny model", "Redis `appendfsync always`", "≥ 1.0 at 32 writers" if c == 32 else "—"),
            ("lb_mem", "floor_mem", "in memory, tiny model", "libmicrohttpd's floor", "reference"),
            ("lb_data", "floor_data", "`--data`, tiny model", "libmicrohttpd's durable floor", "reference"),
            ("lb_data", "floor_async", "`--data`, tiny model", "libmicrohttpd's durable floor serving while it syncs", "reference"),
            ("floor_data", "redis", "writefloor durable", "Redis `appendfsync always`", "reference"),
            ("floor_async", "redis", "writefloor durable, serving while it syncs", "Redis `appendfsync always`", "reference"),
        ]
        for lb, anchor, label, anchor_label, target in pairs:
            a, b = get(lb), get(anchor)
            if a or b:
                rows.append(("writes", f"{label}, {c} writer{'s' * (c > 1)}", write_cell(a),
                             f"{anchor_label}: {write_cell(b)}", "writes/s " + fmt_ratio(a and a["rps"], b and b["rps"]), target))
        for big, tiny, label, target in (("lb_data_big", "lb_data", "`--data`", "≤ 1.5 (tiny ÷ 1 MB writes/s)"),
                                         ("lb_mem_big", "lb_mem", "in memory", "—")):
            a, b = get(big), get(tiny)
            if a or b:
                rows.append(("writes", f"{label}, 1 MB model, {c} writer{'s' * (c > 1)}", write_cell(a),
                             f"same on the tiny model: {write_cell(b)}",
                             "tiny ÷ 1 MB writes/s " + fmt_ratio(b and b["rps"], a and a["rps"]), target))
    for (count, c) in sorted(k for k in stream_runs if k[0] > 0):
        a, b = stream_runs[(count, c)], stream_runs.get((0, c))
        closed = f", {a.get('closed', 0)} streams closed" if a.get("closed") else ""
        ratio = (f"p50 {fmt_ratio(a['p50'], b and b['p50'])}, p99 {fmt_ratio(a['p99'], b and b['p99'])}"
                 if b else "—")
        rows.append(("writes", f"write latency with {count:,} open streams on the model, in memory, {c} writer{'s' * (c > 1)}",
                     write_cell(a) + closed, f"no streams: {write_cell(b)}", ratio, "measured (item 3)"))
    return rows


def write_matrix(directory):
    """Writes/s and p50 for each case (rows) at each concurrency (columns)."""
    runs, _ = load_writes(directory)
    conns = sorted({c for _, c in runs})
    if not conns:
        return []
    lines = ["| server | " + " | ".join(f"{c} writer{'s' * (c > 1)}" for c in conns) + " |",
             "|---|" + "---:|" * len(conns)]
    for case, label in WRITE_CASES:
        cells = [runs.get((case, c)) for c in conns]
        if any(cells):
            lines.append(f"| {label} | " + " | ".join(
                f"{s['rps']:,.0f}/s, p50 {s['p50']:.2f} ms" if s else "—" for s in cells) + " |")
    return lines


def load_cluster(directory):
    """{("fanout", rate): {server: [runs]}} and {("writes", conns): {server: [runs]}} from cluster.sh."""
    runs = {}
    for m, r in read_runs(directory, r"(fanout|writes)-(\w+?)-([rc])(\d+)-\d+\.json$"):
        runs.setdefault((m[1], int(m[4])), {}).setdefault(m[2], []).append(r)
    return runs


def cluster_rows(directory):
    """Three LiveBind nodes on NATS JetStream against three nginx + Nchan sharing Redis (issue #16)."""
    rows, runs = [], load_cluster(directory)
    skipped = ""
    try:
        skipped = open(os.path.join(directory, "livebind-skipped.txt"), encoding="utf-8").read().strip()
    except OSError:
        pass
    missing = f"not measured: {skipped}" if skipped else "not measured"
    for (kind, n), by_server in sorted(runs.items(), key=lambda kv: (kv[0][0], kv[0][1] == 0, kv[0][1])):
        if kind != "fanout":
            continue
        lb, nc = (summarize(by_server[k]) if k in by_server else None for k in ("livebind", "nchan"))
        subs = max(r["subscribers"] for rs in by_server.values() for r in rs)
        # One order for everyone is LiveBind's promise across nodes: sseload counts the different
        # arrival orders among the subscribers that got every message (1 = all agree), worst repeat.
        orders = {k: max(r.get("orders", -1) for r in rs) for k, rs in by_server.items()}
        order_text = lambda k: (f", {orders[k]} order{'s' * (orders[k] != 1)} among the streams"
                                if orders[k] >= 0 else "")
        cell = lambda s: (fanout_cell(s) + order_text("livebind")) if s else missing
        ratio = (f"ev/s {lb['rate'] / nc['rate']:.2f}, p99 {lb['p99'] / nc['p99']:.2f}" if lb and nc else "—")
        label = (f"cluster fan-out: 3 × {subs // 3:,} subscribers over 3 servers, 2,000 × 200 B published to one, "
                 f"at {'max rate' if n == 0 else f'{n:,}/s'}")
        nc_cell = (fanout_cell(nc) + order_text("nchan")) if nc else "not measured"
        rows.append(("cluster", label, cell(lb), "Nchan ×3 + Redis: " + nc_cell,
                     ratio, "ev/s ≥ 1.0, 0 lost"))
    for (kind, n), by_server in sorted(runs.items()):
        if kind != "writes":
            continue
        def summary(results):
            if not results:
                return None
            med = lambda key: statistics.median(r[key] for r in results)
            return {"rps": med("rps"), "p50": med("p50_ms"), "p99": med("p99_ms"), "n": len(results),
                    "errors": max(sum(r.get("errors", {}).values()) for r in results),
                    "conflicts": statistics.median(r.get("conflicts", 0) for r in results)}
        lb, nc = summary(by_server.get("livebind")), summary(by_server.get("nchan"))
        lb_cell = (write_cell(lb) + (f", {lb['conflicts']:,.0f} writes run again after a conflict" if lb["conflicts"] else "")
                   if lb else missing)
        rows.append(("cluster", f"cluster writes: {n} writers spread over 3 servers, acknowledged writes/s",
                     lb_cell, "Nchan ×3 + Redis publish: " + write_cell(nc),
                     "writes/s " + fmt_ratio(lb and lb["rps"], nc and nc["rps"]), "measured"))
    if skipped and not runs:
        rows.append(("cluster", "cluster mode", missing, "—", "—", "—"))
    return rows


BROWSER_TARGETS = [  # (words in the measurement, target)
    ("advantage", "≥ 100× cheaper than a re-render"),
    ("frame rate", "60 fps at 1,000 rows"),
    ("long tasks", "none over 50 ms"),
]


def browser_rows(path):
    """Rows of bench_dom.py's markdown table (| measurement | result |), or JSON object lines."""
    rows = []
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError:
        return rows
    for line in lines:
        line = line.strip()
        if line.startswith("{"):
            try:
                obj = json.loads(line)
            except ValueError:
                continue
            for key, value in obj.items():
                rows.append(("browser", key, value if isinstance(value, str) else json.dumps(value), "—", "—", "—"))
            continue
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip("|").split("|")]
        if len(cells) < 2 or cells[0] in ("measurement", "") or set(cells[0]) <= set("-: "):
            continue
        target = next((t for words, t in BROWSER_TARGETS if words in cells[0]), "—")
        rows.append(("browser", cells[0], cells[1], "—", "—", target))
    if not rows and lines:
        rows.append(("browser", "bench_dom.py (no table; last line)", lines[-1], "—", "—", "—"))
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--engine", nargs="*", default=[])
    ap.add_argument("--fanout")
    ap.add_argument("--browser")
    ap.add_argument("--ceiling")
    ap.add_argument("--writes")
    ap.add_argument("--cluster")
    a = ap.parse_args()
    rows = []
    runs = [parse_engine(p) for p in a.engine if os.path.exists(p)]
    if runs:
        rows += engine_rows(median_runs(runs))
    if a.fanout:
        rows += fanout_rows(a.fanout)
    if a.ceiling:
        rows += ceiling_rows(a.ceiling)
    if a.writes:
        rows += write_rows(a.writes)
    if a.cluster:
        rows += cluster_rows(a.cluster)
    if a.browser:
        rows += browser_rows(a.browser)
    print("| area | measure | LiveBind | anchor | LiveBind / anchor | target |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        print("| " + " | ".join(row) + " |")
    if runs:
        print(f"\nEngine: median of {len(runs)} run(s), each the median sample; per operation.")
    matrix = write_matrix(a.writes) if a.writes else []
    if matrix:
        print("\nWrites (median writes/s and p50 over the repeats):\n")
        print("\n".join(matrix))


if __name__ == "__main__":
    sys.exit(main())
