#!/usr/bin/env bash
# Allocations per write: `malloc` calls made by livebind-server per `PUT /models/bench/n`, counted with
# a uprobe on libc's malloc (needs root and `perf`; counts every malloc of the process, libmicrohttpd's
# and Swift's). Deterministic, unlike timings, so it shows a change's effect on a loaded machine.
#   Benchmarks/writes/mallocs.sh [--data] [SERVER_BINARY]   (default .build/release/livebind-server)
set -euo pipefail
cd "$(dirname "$0")/../.."
source Tests/support/server.sh                           # start_server, stop_server
data=""
[ "${1:-}" = --data ] && { data=1; shift; }
server=${1:-.build/release/livebind-server}
libc=$(ldd "$server" | awk '$1 ~ /^libc\.so/ {print $3}')
work=$(mktemp -d /tmp/livebind-mallocs.XXXXXX)
echo '{"models": {"bench": {"n": 0}}}' >"$work/tiny.json"
extra=()
[ -n "$data" ] && { mkdir "$work/data"; extra=(--data "$work/data"); }
perf probe -q -x "$libc" malloc 2>/dev/null || true      # probe_libc:malloc (kept if it existed)
trap 'stop_server; rm -rf "$work"' EXIT
start_server --prefix setsid --log "$work/server.log" --wait 50 "$server" --config "$work/tiny.json" "${extra[@]}"
url=$base/models/bench/n
wrk -t1 -c8 -d1s -s Benchmarks/writes/write.lua "$url" >/dev/null        # warm-up: caches, pools, buffers
perf stat -e probe_libc:malloc -p "$server_pid" -o "$work/stat.txt" -- sleep 3 &
stat=$!
sleep 0.2
wrk -t1 -c8 -d2s -s Benchmarks/writes/write.lua "$url" >"$work/wrk.txt"
wait "$stat"
requests=$(sed -n 's/^WRITES .*"requests":\([0-9]*\).*/\1/p' "$work/wrk.txt")
mallocs=$(awk '/probe_libc:malloc/ {gsub(",", "", $1); print $1}' "$work/stat.txt")
python3 -c "import sys; r, m = int(sys.argv[1]), int(sys.argv[2]); print(f'{r} writes, {m} mallocs: {m / r:.1f} per write')" \
    "$requests" "$mallocs"
