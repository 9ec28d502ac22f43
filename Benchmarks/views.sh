#!/usr/bin/env bash
# Views over HTTP (issue 29): one livebind-server holding 100,000 orders; 1,000 subscribers of the view
# "open orders, newest first, top 50" (GET /events?sub=orders/items;where=status:eq:open;order=-time;
# limit=50) under 1,000 changes/s, against the same subscribers on the whole array (GET
# /events?model=orders, the filter applied in each page). Driven by the project's sseload
# (Benchmarks/tools/sseload.c): events/s delivered, p50/p99 latency from the write, server CPU per
# change (from the first change to the end of the drain, and the whole run with the snapshots) and
# peak RSS. One fresh server per run.
#
# Two kinds of changes, each run on both subscriptions:
# - changes: existing orders change (PUT /models/orders/items/I/status or …/time). Half set a random
#   order's status to another of open, held and done; half move a random order's time to now (newer
#   than any other). Most do not touch the top 50; some do (a row enters, leaves or moves), and a
#   status change in or out of open changes only the view's count (a `length` event). sseload matches
#   events to writes by the model revision, so every event is timed, whatever it carries.
# - appends: every change is a new open order, the newest (the view's worst case: each reaches every
#   view subscriber, as a remove and an insert). Latency is from each write as sent (sseload's "worst
#   lateness" says how far the writers fell behind their schedule).
# A probe stream on the view (curl) counts what the changes did to it.
#
# Environment: BENCH_QUICK=1 (100 subscribers); VIEWS_SUBSCRIBERS (1000), VIEWS_RATE (1000),
# VIEWS_MESSAGES (3000), VIEWS_ORDERS (100000), VIEWS_APPENDS (1: also the appends), VIEWS_OUT
# (Benchmarks/results/views), LIVEBIND_SERVER.
set -euo pipefail
cd "$(dirname "$0")/.."                       # the repository root
root=$(pwd)
sudo=$([ "$(id -u)" = 0 ] || echo sudo)
quick=${BENCH_QUICK:-0}
subscribers=${VIEWS_SUBSCRIBERS:-$([ "$quick" = 1 ] && echo 100 || echo 1000)}
rate=${VIEWS_RATE:-1000}
messages=${VIEWS_MESSAGES:-3000}
orders=${VIEWS_ORDERS:-100000}
appends=${VIEWS_APPENDS:-1}
server_bin=${LIVEBIND_SERVER:-$root/.build/release/livebind-server}
out=${VIEWS_OUT:-$root/Benchmarks/results/views}
tools=$root/Benchmarks/.build/tools
work=$(mktemp -d /tmp/livebind-views.XXXXXX)
server_pid=""
probe_pid=""
source "$root/Benchmarks/servers.sh"
log() { printf '%s\n' "$*" >&2; }
stop_probe() { [ -z "$probe_pid" ] || { kill "$probe_pid" 2>/dev/null; wait "$probe_pid" 2>/dev/null || true; probe_pid=""; }; }
cleanup() { stop_probe; stop_server; rm -rf "$work"; }
trap cleanup EXIT
mkdir -p "$out"
build_sseload

# The orders (open, held and done, with times below 1,000,003) and the writes of each kind, one a line
# "METHOD PATH BODY" for sseload --requests. Each write changes something: an unchanged value would
# commit nothing, and its answer would name an earlier revision.
python3 - "$orders" "$messages" "$work" <<'PY'
import json, random, sys
n, m, work = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
statuses = ("open", "held", "done")
status = [statuses[i % 3] for i in range(n)]
items = [{"id": i, "status": status[i], "time": (i * 7919) % 1_000_003, "total": i % 500} for i in range(n)]
with open(f"{work}/config.json", "w") as f:
    json.dump({"models": {"orders": {"items": items}}}, f, separators=(",", ":"))
rng = random.Random(29)
with open(f"{work}/changes.txt", "w") as f:
    for seq in range(1, m + 1):
        i = rng.randrange(n)
        if seq % 2:
            status[i] = rng.choice([s for s in statuses if s != status[i]])
            f.write(f'PUT /models/orders/items/{i}/status "{status[i]}"\n')
        else:
            f.write(f"PUT /models/orders/items/{i}/time {1_000_003 + seq}\n")
with open(f"{work}/appends.txt", "w") as f:
    for seq in range(1, m + 1):
        f.write("POST /models/orders/items " + json.dumps({"id": n + seq, "status": "open", "time": 2_000_000 + seq, "total": seq % 500}, separators=(",", ":")) + "\n")
PY

view="/events?sub=orders/items;where=status:eq:open;order=-time;limit=50"
run() {  # name subscription-path requests-file
    local name=$1 path=$2 requests=$3 file=$out/$1.json
    start_server --prefix setsid --log "$work/$name.log" "$server_bin" --config "$work/config.json" \
        --max-streams $((subscribers + 100)) || return 1
    raise_share "$server_pid"
    if [ "$path" = "$view" ]; then  # one more stream on the view, to count what the changes did to it
        curl -sN "$base$path" >"$out/$name.probe" 2>/dev/null &
        probe_pid=$!
    fi
    log "  $name: $(uptime)"
    "$tools/sseload" -p "$port" --sub "$path" --requests "$requests" --server-pid "$server_pid" \
        -c "$subscribers" -m "$messages" -r "$rate" -k 8 -w -j -t 600 --drain 10 >"$file" 2>"$file.txt" \
        || log "  sseload exit $? (see $file.txt)"
    stop_probe
    stop_server
}
log "views: $orders orders, $subscribers subscribers, $messages changes at $rate/s"
run view "$view" "$work/changes.txt"
run whole "/events?model=orders" "$work/changes.txt"
if [ "$appends" = 1 ]; then
    run view-appends "$view" "$work/appends.txt"
    run whole-appends "/events?model=orders" "$work/appends.txt"
fi
python3 - "$out" "$messages" "$appends" <<'PY'
import json, os, sys
out, changes, appends = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"

def probe(name):  # what the changes did to the view: events that changed rows (and how), events that changed only the count
    try:
        text = open(os.path.join(out, name + ".probe")).read()
    except OSError:
        return None
    rows, counts, kinds, event = 0, 0, {}, None
    for line in text.split("\n"):
        if line.startswith("event: "):
            event = line[7:]
        elif line.startswith("data: ") and event not in (None, "stream", "snapshot"):
            if event == "length":
                counts += 1
                continue
            rows += 1
            data = json.loads(line[6:])
            for change in data.get("changes", [{"kind": event}]):
                kinds[change["kind"]] = kinds.get(change["kind"], 0) + 1
    return rows, counts, kinds

print("| changes | subscribers of | changes that reached them | events/s delivered | p50 | p99 | server CPU per change | server CPU, whole run | peak RSS | lost |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
runs = [("view", "existing orders", "the view"), ("whole", "existing orders", "the whole array")]
if appends:
    runs += [("view-appends", "new open orders (worst case)", "the view"), ("whole-appends", "new open orders (worst case)", "the whole array")]
for name, what, label in runs:
    try:
        r = json.load(open(os.path.join(out, name + ".json")))
    except (OSError, ValueError):
        print(f"| {what} | {label} | failed | | | | | | | |")
        continue
    cpu = r.get("server_cpu_pub_s", 0) / changes * 1e3  # from the first change to the end of the drain
    print(f"| {what} | {label} | {r.get('reached', 0):,} | {r['delivered_per_s']:,.0f} | {r['lat_ms']['p50']:.1f} ms | {r['lat_ms']['p99']:.1f} ms | "
          f"{cpu:.2f} ms | {r.get('server_cpu_s', 0):.1f} s | {r.get('server_hwm_kb', 0) / 1024:,.0f} MiB | {r['lost']} |")
for name in [n for n, _, _ in runs if n.startswith("view")]:
    p = probe(name)
    if p:
        rows, counts, kinds = p
        print(f"\n{name}: {rows:,} changes changed the rows ({', '.join(f'{v:,} {k}' for k, v in sorted(kinds.items()))}), "
              f"{counts:,} only the count (length)")
PY
