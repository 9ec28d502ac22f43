#!/usr/bin/env bash
# Views over HTTP (issue 29): one livebind-server holding 100,000 orders; 1,000 subscribers of the view
# "open orders, newest first, top 50" (GET /events?sub=orders/items;where=…;order=-t;limit=50) under
# 1,000 changes/s, against the same subscribers on the whole array (GET /events?model=orders, the
# filter applied in each page). Every change is a new open order appended to the array: it enters the
# view's top 50 (the view's worst case: every change reaches every view subscriber, as a remove and an
# insert). Driven by the project's sseload (Benchmarks/tools/sseload.c): events/s delivered, p50/p99
# latency, server CPU per change and peak RSS. One fresh server per run.
#
# Environment: BENCH_QUICK=1 (100 subscribers); VIEWS_SUBSCRIBERS (1000), VIEWS_RATE (1000),
# VIEWS_MESSAGES (3000), VIEWS_ORDERS (100000), VIEWS_OUT (Benchmarks/results/views), LIVEBIND_SERVER.
set -euo pipefail
cd "$(dirname "$0")/.."                       # the repository root
root=$(pwd)
sudo=$([ "$(id -u)" = 0 ] || echo sudo)
quick=${BENCH_QUICK:-0}
subscribers=${VIEWS_SUBSCRIBERS:-$([ "$quick" = 1 ] && echo 100 || echo 1000)}
rate=${VIEWS_RATE:-1000}
messages=${VIEWS_MESSAGES:-3000}
orders=${VIEWS_ORDERS:-100000}
server_bin=${LIVEBIND_SERVER:-$root/.build/release/livebind-server}
out=${VIEWS_OUT:-$root/Benchmarks/results/views}
tools=$root/Benchmarks/.build/tools
work=$(mktemp -d /tmp/livebind-views.XXXXXX)
server_pid=""
source "$root/Benchmarks/servers.sh"
log() { printf '%s\n' "$*" >&2; }
cleanup() { stop_server; rm -rf "$work"; }
trap cleanup EXIT
mkdir -p "$out"
build_sseload

# The orders: open, held and done, with times; the changes are new orders with "pad" (sseload's body).
python3 - "$orders" >"$work/config.json" <<'PY'
import json, sys
n = int(sys.argv[1])
items = [{"id": i, "status": ("open", "held", "done")[i % 3], "time": (i * 7919) % 1_000_003, "total": i % 500} for i in range(n)]
json.dump({"models": {"orders": {"items": items}}}, sys.stdout, separators=(",", ":"))
PY

view="/events?sub=orders/items;where=pad:prefix:x;order=-t;limit=50"
run() {  # name subscription-path
    local name=$1 path=$2 file=$out/$1.json
    start_server --prefix setsid --log "$work/$name.log" "$server_bin" --config "$work/config.json" \
        --max-streams $((subscribers + 100)) || return 1
    raise_share "$server_pid"
    "$tools/sseload" -p "$port" --sub "$path" --pub /models/orders/items --server-pid "$server_pid" \
        -c "$subscribers" -m "$messages" -r "$rate" -z 120 -k 8 -w -j -t 600 --drain 10 >"$file" 2>"$file.txt" \
        || log "  sseload exit $? (see $file.txt)"
    stop_server
}
log "views: $orders orders, $subscribers subscribers, $messages changes at $rate/s"
run view "$view"
run whole "/events?model=orders"
python3 - "$out" "$messages" <<'PY'
import json, os, sys
out, changes = sys.argv[1], int(sys.argv[2])
print("| subscribers of | events/s delivered | p50 ms | p99 ms | server CPU per change (run / changes) | peak RSS | lost |")
print("|---|---:|---:|---:|---:|---:|---:|")
for name, label in (("view", "the view (server arranges, top 50)"), ("whole", "the whole array (filter in the page)")):
    path = os.path.join(out, name + ".json")
    try:
        r = json.load(open(path))
    except (OSError, ValueError):
        print(f"| {label} | failed | | | | | |")
        continue
    cpu = r.get("server_cpu_s", 0) / changes * 1e3
    print(f"| {label} | {r['delivered_per_s']:,.0f} | {r['lat_ms']['p50']:.1f} | {r['lat_ms']['p99']:.1f} | "
          f"{cpu:.2f} ms | {r.get('server_hwm_kb', 0) / 1024:,.0f} MiB | {r['lost']} |")
PY
